"""Names: candidate extraction, aliases, introducing paper, code links, baseline counts, kinds, store, CLI."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from radar.analysis.names import KINDS, find_names, kind_of, load_labels, name_index
from radar.analysis.names.aliases import key_of, merge_keys, surface_key
from radar.analysis.names.evaluate import cross_validate, score, wilson
from radar.analysis.names.evidence import Evidence, collect
from radar.analysis.names.extract import Mention, code_links, mentions
from radar.analysis.names.features import rule_kind
from radar.analysis.names.find import EXTRA_LABEL_FILES, SHARED_LABEL_FILES, classify, training_set
from radar.analysis.names.kinds import KindModel, choose_method_margin, folds_by_name
from radar.analysis.names.table import NameRow, Names
from radar.store import Workspace
from tests.cli_helpers import run_cli


@dataclass(frozen=True)
class Doc:
    id: str
    title: str
    abstract: str
    published: str


def _by_surface(title: str, abstract: str) -> dict[str, Mention]:
    return {m.surface: m for m in mentions(title, abstract)}


def test_mentions_carry_introduction_comparison_size_and_expansion() -> None:
    got = _by_surface(
        "ZetaPO: Zeta Policy Optimization for Reasoning",
        "We propose ZetaPO, a reinforcement learning algorithm. It outperforms GRPO and DAPO on MATH-500 with "
        "Qwen2.5-7B-Instruct. Proximal Policy Optimization (PPO) is slower. We use the large model.",
    )
    zeta = got["ZetaPO"]
    assert zeta.title_prefix and zeta.introduced and "sub:policy" in zeta.features and "app:algorithm" in zeta.features
    assert got["GRPO"].compared and got["DAPO"].compared  # a later item of the compared list counts too
    assert not got["MATH-500"].compared and "L1:on" in got["MATH-500"].features
    qwen = got["Qwen2.5-7B-Instruct"]
    assert qwen.family == "Qwen2.5" and qwen.sized
    assert "explast:optimization" in got["PPO"].features and not got["PPO"].introduced
    assert "We" not in got and "It" not in got  # one capital is not a name


def test_an_llm_based_method_is_not_an_introduced_name() -> None:
    got = _by_surface("A study", "We propose a novel LLM-based framework for planning.")
    assert not got["LLM-based"].introduced


def test_code_links_are_repository_urls_without_trailing_punctuation() -> None:
    text = "Code is at https://github.com/org/repo. Weights: https://huggingface.co/org/model, see http://x.org/a."
    assert code_links(text) == ["https://github.com/org/repo", "https://huggingface.co/org/model"]


def test_spelling_keys_merge_case_hyphens_and_variants() -> None:
    assert key_of("Qwen-3.5") == key_of("Qwen3.5") == "qwen3.5"
    assert surface_key("Qwen3.5-9B-Instruct") == "qwen3.5"
    assert surface_key("BLEU-1") != surface_key("BLEU")  # a metric's order is not a variant


def test_merge_plural_and_short_name() -> None:
    docs = {"lora": [1, 2, 3], "loras": [4], "deepseekr1": [1, 2, 3, 5], "r1": [6, 7], "x1": [8, 9]}
    families = {"lora": "LoRA", "loras": "LoRAs", "deepseekr1": "DeepSeek-R1", "r1": "R1", "x1": "X1"}
    feats = {"r1": {"L:deepseek": 2}}  # "DeepSeek R1", written with a space
    groups = merge_keys(docs, families, feats)
    assert groups["loras"] == "lora" and groups["r1"] == "deepseekr1" and groups["x1"] == "x1"
    assert merge_keys(docs, families, {})["r1"] == "r1"  # no co-mention, no spaced head: kept apart


CORPUS = [
    Doc("2501.00001", "Reasoning with small models", "We fine-tune with ZetaPO and GRPO on GSM8K.", "2025-01-05"),
    Doc(
        "2502.00002",
        "ZetaPO: Zeta Policy Optimization for Reasoning",
        "We propose ZetaPO, a reinforcement learning algorithm. Code: https://github.com/zeta/zetapo.",
        "2025-02-10",
    ),
    Doc("2503.00003", "Better RL", "Our method outperforms Zeta-PO and GRPO on GSM8K.", "2025-03-01"),
    Doc("2503.00004", "More RL", "It is better than ZetaPO on MATH-500 with Qwen3.5-9B.", "2025-03-20"),
    Doc("2504.00005", "Models", "We evaluate Qwen-3.5 and Qwen3.5 on MATH-500.", "2025-04-02"),
    Doc("2504.00006", "Models 2", "Qwen3.5-27B and GRPO on MATH-500.", "2025-04-03"),
    Doc("2601.00007", "Late", "ZetaPO again, compared with GRPO.", "2026-01-01"),
]


def test_find_names_introduction_first_mention_code_baselines_series() -> None:
    names = {n.name: n for n in find_names(CORPUS, "2025-12-31", recent_days=30)}
    zeta = names["ZetaPO"]
    assert zeta.first_id == "2501.00001" and zeta.first_seen == "2025-01-05"  # first mention
    assert zeta.introduced_by == "2502.00002" and zeta.code == ("https://github.com/zeta/zetapo",)
    assert zeta.count == 4 and "Zeta-PO" in zeta.aliases  # the 2026 paper is after as_of
    assert zeta.baseline_mentions == 2  # "outperforms Zeta-PO", "better than ZetaPO"
    assert zeta.recent_count == 0  # nothing in December 2025
    assert dict(zeta.series)["2025-03"] == 2 and zeta.series[0] == ("2025-01", 1) and zeta.series[-1][0] == "2025-12"
    assert names["GRPO"].introduced_by is None and names["GRPO"].baseline_mentions == 1
    qwen = names["Qwen3.5"]
    assert {"Qwen-3.5", "Qwen3.5-9B", "Qwen3.5-27B"} <= set(qwen.aliases) and qwen.count == 3
    later = {n.name: n for n in find_names(CORPUS)}  # default as_of: the newest document
    assert later["ZetaPO"].count == 5 and later["ZetaPO"].recent_count == 1
    assert later["GRPO"].baseline_mentions == 2


def test_kind_of_resolves_any_spelling() -> None:
    names = find_names(CORPUS)
    assert kind_of("Qwen-3.5", names) == kind_of("Qwen3.5-27B-Instruct", names) == name_index(names)["qwen3.5"].kind
    assert kind_of("NoSuchName", names) is None
    assert all(n.kind in KINDS for n in names)


def test_find_names_rejects_bad_settings() -> None:
    from radar.analysis.names import NamesError

    with pytest.raises(NamesError):
        find_names(CORPUS, min_docs=0)
    assert find_names([], "2025-01-01") == []


def _evidence(name: str, n: int, **feats: int) -> Evidence:
    ev = Evidence(key=key_of(name), docs=list(range(n)))
    ev.spellings[name] = n
    ev.features.update({k.replace("__", ":"): v for k, v in feats.items()})
    return ev


def test_rules_read_the_cues() -> None:
    bench = _evidence("FooEval2", 4, title_prefix=1, sub__benchmark=1)
    bench.intro_docs = [0]
    assert rule_kind("FooEval2", bench) == "benchmark"
    assert rule_kind("Fine-Tuning", _evidence("Fine-Tuning", 50)) == "generic"
    assert rule_kind("LLM-based", _evidence("LLM-based", 50)) == "generic"
    assert rule_kind("Zork3", _evidence("Zork3", 10, sized=5)) == "model"
    method = _evidence("ZAPO", 5, title_prefix=1, sub__optimization=1)
    method.intro_docs = [0]
    assert rule_kind("ZAPO", method) == "method"


def test_accelerator_names_are_hardware_whatever_the_classifier_says() -> None:
    for name in ("H100", "A100", "H20", "L40", "L40S", "MI300X", "GB200", "RTX3090", "Ascend910B"):
        assert rule_kind(name, _evidence(name, 20, sized=15)) == "hardware", name
    for name in ("P90", "L2", "L4", "T5", "GPU", "FPGA", "R1"):  # percentiles, norms/levels, a model, generic terms
        assert rule_kind(name, None) != "hardware", name
    docs, labels, _ = _unsure_corpus()
    for j in range(3):  # a GPU the model would call a model ("... a pretrained language model with ...")
        abstract = "Results for H100 were reported here, a pretrained language model with billions of parameters."
        docs.append(Doc(f"2502.000{j}", f"Paper H.{j}", abstract, "2025-02-05"))
    assert classify(collect(docs), labels)["h100"][0] == "hardware"


def _method_rows() -> tuple[list[dict[str, float]], list[str]]:
    """Clear methods (feature m), many clear generic names (g) and an ambiguous group (a: 8 methods, 7 generic)
    that the model calls method."""
    rows = [{"m": 1.0}] * 30 + [{"g": 1.0}] * 100 + [{"a": 1.0}] * 15
    return rows, ["method"] * 30 + ["generic"] * 100 + ["method"] * 8 + ["generic"] * 7


def test_method_margin_trades_recall_for_precision() -> None:
    rows, kinds = _method_rows()
    plain = KindModel().fit(rows, kinds)
    said = [k for k, _ in plain.predict(rows)]
    assert said.count("method") == 45  # without a margin the ambiguous group is called method: precision 38/45
    margin = choose_method_margin(rows, kinds, k=3)
    assert margin > 0
    strict = dataclasses.replace(plain, method_margin=margin)
    got = [k for k, _ in strict.predict(rows)]
    assert got[:30] == ["method"] * 30 and got[30:] == ["generic"] * 115  # the ambiguous group: the runner-up
    assert choose_method_margin(rows, kinds, k=3, target=0.5) == 0.0  # precision 0.82 already meets 0.5
    # 5 labeled methods are too few for 3 folds of at least 2 each: no margin
    assert choose_method_margin(rows[25:130], kinds[25:130], k=3) == 0.0


def test_method_margin_never_costs_accuracy_beyond_the_allowance() -> None:
    # the ambiguous group is mostly methods (9 of 14): the margin would buy precision with accuracy
    rows = [{"m": 1.0}] * 30 + [{"g": 1.0}] * 30 + [{"a": 1.0}] * 14
    kinds = ["method"] * 30 + ["generic"] * 30 + ["method"] * 9 + ["generic"] * 5
    assert choose_method_margin(rows, kinds, k=3, target=0.99) == 0.0


def test_kind_model_drops_features_of_a_single_name() -> None:
    rows = [{"m": 1.0, "only_once": 1.0}] + [{"m": 1.0}] * 9 + [{"g": 1.0}] * 10
    kinds = ["method"] * 10 + ["generic"] * 10
    model = KindModel().fit(rows, kinds)
    assert model._vec is not None and model._keep is not None
    kept = {model._vec.feature_names_[i] for i in model._keep}
    assert kept == {"m", "g"}
    assert [k for k, _ in model.predict([{"m": 1.0}, {"g": 1.0}, {"only_once": 1.0, "g": 1.0}])] == [
        "method",
        "generic",
        "generic",
    ]


def test_folds_never_split_a_name_and_scores_count_right() -> None:
    groups = ["qwen3.5", "qwen3.5", "grpo", "lora", "lora", "x"] * 5
    folds = folds_by_name(groups, 3, seed=1)
    for g in set(groups):
        assert len({f for f, gg in zip(folds, groups, strict=True) if gg == g}) == 1
    s = score(["method", "model", "method", "generic"], ["method", "method", "method", "generic"])
    assert s.accuracy == 0.75 and s.precision["method"] == pytest.approx(2 / 3) and s.precision["org"] is None
    lo, hi = wilson(75, 100)
    assert lo < 0.75 < hi and hi - lo < 0.2


def test_cross_validation_on_real_papers_beats_chance(small_snapshot: Path) -> None:
    import gzip

    import orjson

    with gzip.open(small_snapshot, "rb") as fh:
        docs = [Doc(d["id"], d["title"], d["abstract"], d["published"]) for d in map(orjson.loads, fh)]
    corpus = collect(docs, min_docs=2)
    labels = [(n, k) for n, k in load_labels(files=SHARED_LABEL_FILES) if corpus.find(n) is not None]
    assert len(labels) >= 20
    extra = load_labels(files=EXTRA_LABEL_FILES)  # training only, as bench_names.py does
    result = cross_validate(corpus, labels, k=3, extra=extra).scores()
    majority = max(sum(k == kind for _, k in labels) for kind in KINDS) / len(labels)
    assert result["rules"].accuracy > majority - 0.1 and 0.0 < result["Radar"].accuracy <= 1.0
    assert len(result["Radar"].predicted) == len(labels)


def test_labeled_names_keep_their_label_and_others_are_classified() -> None:
    phrase = {"method": "a policy optimization algorithm", "benchmark": "a benchmark of questions", "model": "a model"}
    docs, labels = [], []
    for i in range(60):
        kind = ("method", "benchmark", "model")[i % 3]
        name = f"Qx{i}Vk"
        for j in range(3):
            docs.append(Doc(f"2501.{i:03d}{j}", f"Paper {i}.{j}", f"We propose {name}, {phrase[kind]}.", "2025-01-05"))
        if i < 48:  # the classifier path needs at least MIN_LABELED (40) labeled names
            labels.append((name, "generic" if i == 0 else kind))  # one label the evidence contradicts
    corpus = collect(docs)
    kinds = classify(corpus, labels)
    train = training_set(corpus, labels)
    assert len(train) == 48 and all(kinds[k] == (kind, 1.0) for k, kind in train.items())
    assert kinds["qx0vk"] == ("generic", 1.0)  # the label wins over the model
    unlabeled = {f"qx{i}vk": ("method", "benchmark", "model")[i % 3] for i in range(48, 60)}
    assert all(kinds[k][0] == kind and kinds[k][1] < 1.0 for k, kind in unlabeled.items())


def test_names_table_round_trip(workspace: Workspace) -> None:
    row = NameRow(
        name="ZetaPO",
        kind="method",
        kind_score=0.9,
        aliases=("Zeta-PO",),
        introduced_by="2502.00002",
        first_seen="2025-01-05",
        first_id="2501.00001",
        count=4,
        recent_count=1,
        baseline_mentions=2,
        recent_baseline_mentions=0,
        code=("https://github.com/zeta/zetapo",),
        series=(("2025-01", 1), ("2025-02", 1)),
    )
    other = dataclasses.replace(row, name="Qwen3.5", kind="model", first_seen="2025-03-20", count=9)
    with workspace.store() as store:
        names = Names(store)
        assert names.names_state() == "" and names.names() == []
        assert names.replace_names([row, other], "state-1") == 2
        assert names.names_state() == "state-1"
        assert [r.name for r in names.names()] == ["Qwen3.5", "ZetaPO"]
        assert names.names(kind="method") == [row]
        assert [r.name for r in names.names(since="2025-03-01")] == ["Qwen3.5"]
        names.replace_names([other], "state-2")
        assert [r.name for r in names.names()] == ["Qwen3.5"] and names.names_state() == "state-2"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    aliases=st.lists(st.text(max_size=12), max_size=3),
    series=st.lists(st.tuples(st.text(max_size=7), st.integers(0, 10**6)), max_size=3),
)
def test_names_columns_keep_the_json_text_orjson_wrote(
    workspace: Workspace, aliases: list[str], series: list[tuple[str, int]]
) -> None:
    """The names table's arrays are written as the reader before msgspec wrote them (orjson's text, any unicode
    kept as it is), and a row written that way reads back as the same record."""
    import orjson

    row = NameRow(
        "Zëta\u2011PO\u202e", "method", 1, tuple(aliases), None, "2025-01-05", "2501.00001", 4, 1, 2, 0,
        ("https://github.com/zeta/π",), tuple(series),
    )  # fmt: skip
    with workspace.store() as store:
        Names(store).replace_names([row], "s")
        stored = store.conn.execute("SELECT aliases, code, series FROM names").fetchone()
        assert tuple(stored) == tuple(orjson.dumps(list(v)).decode() for v in (row.aliases, row.code, row.series))
        assert Names(store).names() == [row]


def test_radar_methods_on_an_imported_workspace(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import gzip

    import orjson

    ws = tmp_path / "ws"
    assert run_cli(capsys, "--workspace", str(ws), "init").code == 0
    papers = tmp_path / "papers.jsonl.gz"
    with gzip.open(papers, "wb") as fh:
        for d in CORPUS:
            fh.write(orjson.dumps({**d.__dict__, "authors": [], "categories": ["cs.LG"]}) + b"\n")
    assert run_cli(capsys, "--workspace", str(ws), "import", str(papers)).code == 0
    res = run_cli(capsys, "--workspace", str(ws), "methods", "--json")
    assert res.code == 0, res.err
    rows = {r["name"]: r for r in res.json()}
    keys = {"name", "kind", "aliases", "introduced_by", "first_seen", "count", "recent_count", "baseline_mentions"}
    assert keys | {"code"} <= set(rows["ZetaPO"])
    assert rows["ZetaPO"]["introduced_by"] == "2502.00002" and rows["ZetaPO"]["code"] == [
        "https://github.com/zeta/zetapo"
    ]
    kind = rows["ZetaPO"]["kind"]
    only = run_cli(capsys, "--workspace", str(ws), "methods", "--kind", kind, "--json").json()
    assert only and all(r["kind"] == kind for r in only)
    assert run_cli(capsys, "--workspace", str(ws), "methods", "--since", "2099-01-01", "--json").json() == []
    text = run_cli(capsys, "--workspace", str(ws), "methods")
    assert text.code == 0 and "ZetaPO" in text.out
    bad = run_cli(capsys, "--workspace", str(ws), "methods", "--kind", "gadget")
    assert bad.code == 1 and "use one of method" in bad.err and "Traceback" not in bad.err
    assert len(bad.err.strip().splitlines()) == 1
    baddate = run_cli(capsys, "--workspace", str(ws), "methods", "--since", "yesterday")
    assert baddate.code == 1 and "YYYY-MM-DD" in baddate.err
    helped = run_cli(capsys, "methods", "--help")
    assert helped.code == 0 and "--kind" in helped.out


def _unsure_corpus() -> tuple[list[Doc], list[tuple[str, str]], dict[str, str]]:
    """Names whose evidence is alike (same words right around them) and whose kind only the words a little
    further away tell: the evidence model is unsure of every one, the context vectors are not."""
    tail = {
        "method": "a gradient descent optimization algorithm",
        "benchmark": "a dataset of exam questions and answers",
        "model": "a pretrained language model with billions of parameters",
    }
    docs, labels, truth = [], [], {}
    for i in range(72):
        kind = ("method", "benchmark", "model")[i % 3]
        name = f"Qx{i}Vk"
        truth[name.lower()] = kind
        for j in range(3):
            abstract = f"Results for {name} were reported here, {tail[kind]}."
            docs.append(Doc(f"2501.{i:03d}{j}", f"Paper {i}.{j}", abstract, "2025-01-05"))
        if i < 54:
            labels.append((name, kind))
    return docs, labels, {k: v for k, v in truth.items() if int(k[2:-2]) >= 54}


def test_context_snippets_mask_the_name_around_its_mention() -> None:
    from radar.analysis.names.context import snippets

    docs, _, _ = _unsure_corpus()
    corpus = collect(docs)
    got = snippets(corpus, corpus.names["qx1vk"])
    assert len(got) == 3 and got[0] == "Paper 1.0. Results for X were reported here, a dataset"
    assert all("Qx1Vk" not in s for s in got)


def test_context_vectors_decide_the_names_the_evidence_leaves_unsure(shared_model_cache: Path) -> None:
    from radar.index.config import EmbeddingConfig
    from radar.index.embedder import make_embedder

    docs, labels, unlabeled = _unsure_corpus()
    corpus = collect(docs)
    encoder = make_embedder(EmbeddingConfig(threads=1), device="cpu", cache_dir=shared_model_cache)
    embedded: list[str] = []

    def embed(texts: Sequence[str]) -> np.ndarray:
        embedded.extend(texts)
        return encoder.embed(texts)

    def accuracy(kinds: dict[str, tuple[str, float]]) -> float:
        return sum(kinds[k][0] == kind for k, kind in unlabeled.items()) / len(unlabeled)

    plain = classify(corpus, labels)
    with_context = classify(corpus, labels, embed)
    # names the evidence is sure of (probability >= CONTEXT_GATE) keep its kind, right or wrong
    assert accuracy(plain) < 0.5 and accuracy(with_context) > accuracy(plain) + 0.3
    # the labeled names (54 x 3 snippets) and the unsure unlabeled ones (at most 18 x 3) were embedded, masked
    assert 54 * 3 < len(embedded) <= 72 * 3 and not any("Qx" in t for t in embedded)


def test_cross_validation_fits_the_context_decider_on_training_folds_only() -> None:
    docs, labels, _ = _unsure_corpus()
    corpus = collect(docs)
    kinds = [k for _, k in labels]
    # vectors that tell the kind (one axis per kind): the "context" decider must use them, fold by fold
    vectors = np.stack([np.eye(3, dtype=np.float32)[("method", "benchmark", "model").index(k)] for k in kinds])
    result = cross_validate(corpus, labels, k=3, vectors=vectors).scores()
    assert result["Radar"].accuracy < 0.5 and result["+context"].accuracy > result["Radar"].accuracy + 0.3
