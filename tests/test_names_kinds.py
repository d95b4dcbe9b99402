"""Names: what introduces a name, the expansion and neighbour evidence, the shipped lexicon, frequent names."""

from __future__ import annotations

import dataclasses
import gzip
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import orjson
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier

from radar.analysis.names import KINDS, find_names, load_labels, surface_key
from radar.analysis.names.evaluate import FREQUENT_POOL, LEVERS, Variant, check_extra, cross_validate
from radar.analysis.names.evidence import Evidence, collect
from radar.analysis.names.extract import mentions
from radar.analysis.names.features import (
    AREA_WEIGHT,
    FREQUENT,
    expansion_head,
    features,
    neighbour_features,
    neighbours,
    with_heads,
)
from radar.analysis.names.find import (
    EXTRA_LABEL_FILES,
    LABEL_FILES,
    PRIOR_MENTIONS,
    SHARED_LABEL_FILES,
    introducing,
)
from radar.analysis.names.kinds import C, KindModel, WeightedOneVsRest, is_frequent, tuned_model


@dataclass(frozen=True)
class Doc:
    id: str
    title: str
    abstract: str
    published: str


def _flags(title: str, abstract: str) -> dict[str, tuple[bool, bool]]:
    return {m.surface: (m.introduced, m.claimed) for m in mentions(title, abstract)}


def test_a_longer_name_does_not_introduce_the_name_it_contains() -> None:
    dr = "we identify a bias in GRPO. To address this, we introduce Dr. GRPO, an unbiased optimization method."
    assert _flags("Understanding R1-Zero-Like Training", dr)["GRPO"] == (False, True)  # was: introduced
    assert _flags("x", "we propose Stratified GRPO, whose central component is new")["GRPO"][0] is False
    assert _flags("x", "we introduce multi-context GRPO, an end-to-end RL framework")["GRPO"][0] is False
    assert _flags("x", "we study GRPO, a stable and scalable online RL algorithm")["GRPO"][0] is False
    assert _flags("LoRA-Pro: Are Low-Rank Adapters Properly Optimized?", "LoRA is popular.")["LoRA"][0] is False


def test_a_title_or_we_propose_introduces_a_name() -> None:
    assert _flags("DAPO: An Open-Source LLM RL System", "We release the DAPO algorithm.")["DAPO"][0] is True
    assert _flags("x", "In this paper, we propose ZetaPO, a reinforcement learning algorithm.")["ZetaPO"][0]
    assert _flags("x", "We present a novel framework, FooNet, which does things.")["FooNet"][0]
    assert _flags("x", "we propose a method called BarPO that works.")["BarPO"][0]
    got = _flags("x", "we introduce Group Relative Policy Optimization (GRPO), a variant of PPO.")
    assert got["GRPO"][0] is True and got["PPO"] == (False, False)


def _doc(i: int, abstract: str, title: str = "A study", day: str = "2025-01-05") -> Doc:
    return Doc(f"2501.{i:05d}", title, abstract, day)


def test_a_name_in_use_before_its_claimed_introduction_has_no_introducing_paper() -> None:
    earlier = [_doc(i, "We train with ZetaPO and compare.", day=f"2025-01-{i + 1:02d}") for i in range(3)]
    claim = _doc(9, "We propose ZetaPO, a new policy optimization algorithm.", day="2025-02-01")
    corpus = collect([*earlier, claim])
    ev = corpus.names["zetapo"]
    assert ev.intro_docs and introducing(ev) is None  # 3 earlier papers use it: the 4th does not introduce it
    fresh = collect([*earlier[:PRIOR_MENTIONS], claim])
    assert introducing(fresh.names["zetapo"]) is not None
    names = {n.name: n for n in find_names([*earlier, claim])}
    assert names["ZetaPO"].introduced_by is None and names["ZetaPO"].code == ()


def test_expansion_shape_tells_a_named_technique_from_a_class() -> None:
    named = mentions("x", "We use Direct Preference Optimization (DPO) here.")[0].features
    lower = mentions("x", "Large scale large language models (LLMs) are used.")
    assert {"expanded", "exp_cap"} <= set(named)
    llms = next(m for m in lower if m.surface == "LLMs").features
    assert "expanded" in llms and "exp_cap" not in llms
    unrelated = mentions("x", "This is something else (GRPO).")[0].features
    assert "expanded" not in unrelated  # the words before "(" do not spell G-R-P-O


def test_neighbour_kinds_come_from_the_labels_of_names_listed_beside_it() -> None:
    docs = [_doc(i, f"We compare PPO, DPO and ZetaPO on math {i}.") for i in range(4)]
    corpus = collect(docs)
    ev = corpus.names["zetapo"]
    near = neighbours(ev, corpus.lookup)
    assert set(near) == {"dpo"}  # "DPO and ZetaPO": the word before it
    assert neighbour_features(ev, near, {"dpo": "method"}) == {"near=method": 3.0}
    assert neighbour_features(ev, near, {}) == {}  # no labeled neighbour: nothing


def test_a_frequent_names_evidence_is_read_twice() -> None:
    docs = [_doc(i, f"We fine-tune with ZetaPO on task {i}.") for i in range(FREQUENT)]
    corpus = collect(docs)
    row = features("ZetaPO", corpus.names["zetapo"])
    assert is_frequent(row) and row["hi:log_docs"] == row["log_docs"]
    rare = features("ZetaPO", collect(docs[:5]).names["zetapo"])
    assert not is_frequent(rare) and not any(k.startswith("hi:") for k in rare)


def test_the_frequent_names_get_their_own_method_margin() -> None:
    # rare names: the method feature is clear; frequent ones: an ambiguous group that a margin fixes
    rare = [{"m": 1.0}] * 30 + [{"g": 1.0}] * 60
    frequent = [{"hi": 1.0, "a": 1.0}] * 15 + [{"hi": 1.0, "m": 1.0}] * 15 + [{"hi": 1.0, "g": 1.0}] * 40
    kinds = ["method"] * 30 + ["generic"] * 60 + ["method"] * 8 + ["generic"] * 7 + ["method"] * 15 + ["generic"] * 40
    model = tuned_model(rare + frequent, kinds)
    assert model.method_margin == 0.0 and model.frequent_margin is not None and model.frequent_margin > 0
    said = [k for k, _ in model.predict([{"hi": 1.0, "a": 1.0}, {"a": 1.0}])]
    assert said[0] == "generic"  # the frequent ambiguous name: method's probability is not far enough ahead
    assert KindModel(frequent_margin=0.9).margins([{"hi": 1.0}, {}]) == [0.9, 0.0]


def test_the_shipped_lexicon_holds_the_frequent_and_new_names() -> None:
    labels = dict(load_labels())
    assert (*SHARED_LABEL_FILES, *EXTRA_LABEL_FILES) == LABEL_FILES and len(SHARED_LABEL_FILES) == 3
    assert labels["PPO"] == "method" and labels["GSPO"] == "method" and labels["H200"] == "hardware"  # H200: extra
    assert labels["H100"] == "hardware" and labels["LLMs"] == "generic"
    assert "unknown" not in labels.values()
    # a labeled name keeps its label: PPO is a method wherever it appears (the old lexicon did not have it)
    docs = [_doc(i, f"We train with PPO and GRPO on task {i}.") for i in range(5)]
    ppo = next(n for n in find_names(docs) if n.name == "PPO")
    assert ppo.kind == "method" and ppo.kind_score == 1.0


def _lexicons_seen(monkeypatch: pytest.MonkeyPatch) -> set[frozenset[str]]:
    """The lexicons the cross-validation's folds hand the neighbour features (one per fold), recorded as it runs."""
    import radar.analysis.names.evaluate as evaluate

    seen: set[frozenset[str]] = set()
    real = evaluate.neighbour_features

    def recording(ev: Evidence, near: Counter[str], lexicon: Mapping[str, str]) -> dict[str, float]:
        seen.add(frozenset(lexicon))
        return real(ev, near, lexicon)

    monkeypatch.setattr(evaluate, "neighbour_features", recording)
    return seen


def test_cross_validation_keeps_test_names_out_of_the_neighbour_lexicon(monkeypatch: pytest.MonkeyPatch) -> None:
    import radar.analysis.names.evaluate as evaluate

    docs, labels = [], []
    for i in range(30):
        a, b = f"Qa{i}Vk", f"Qb{i}Vk"
        docs += [_doc(i * 10 + j, f"Results of {a} and {b} in study {j}.") for j in range(3)]
        labels += [(a, "method" if i % 2 else "benchmark"), (b, "method" if i % 2 else "benchmark")]
    corpus = collect(docs)
    seen = _lexicons_seen(monkeypatch)
    evaluate.cross_validate(corpus, labels, k=5, variants={"n": Variant(margin=0.0)})
    groups = {corpus.find(n).key for n, _ in labels}  # type: ignore[union-attr]
    left_out = [groups - lex for lex in seen]
    assert len(left_out) == 5  # one lexicon per fold: its training part's labels
    assert all(out for out in left_out) and set().union(*left_out) == groups  # every name left out once
    assert sum(len(out) for out in left_out) == len(groups)


def test_a_fold_whose_names_leak_into_the_training_or_the_lexicon_is_refused() -> None:
    from radar.analysis.names.evaluate import check_disjoint

    check_disjoint({"dpo"}, {"ppo"}, {"ppo": "method"}, 0)  # disjoint: measured
    with pytest.raises(AssertionError, match="in the lexicon"):
        check_disjoint({"dpo"}, {"ppo"}, {"ppo": "method", "dpo": "method"}, 1)
    with pytest.raises(AssertionError, match="in the classifier's training"):
        check_disjoint({"dpo"}, {"ppo", "dpo"}, {}, 2)


def test_one_shipped_copy_of_the_name_labels_is_the_contributions_lexicon() -> None:
    from importlib import resources

    from radar.analysis.contributions.labels import load_lexicon
    from radar.analysis.contributions.model import shipped_model

    lexicon = load_lexicon()
    first: dict[str, str] = {}
    for name, kind in load_labels(files=SHARED_LABEL_FILES):  # the extra training names are the names stage's
        first.setdefault(name.lower(), kind)
    assert lexicon == first and lexicon["ppo"] == "method" and lexicon["h100"] == "hardware"
    assert dict(shipped_model().lexicon) == lexicon  # the fitted model read the same kinds
    shipped = resources.files("radar.analysis.contributions").joinpath("labels")
    assert not any(p.name.startswith(("lexicon", "names_dev")) for p in shipped.iterdir())  # no second copy


def test_case_forms_with_different_contexts_stay_apart() -> None:
    serving = [_doc(i, f"We serve the model with vLLM on task {i}, as vLLM serving is fast.") for i in range(12)]
    vision = [
        _doc(100 + i, f"Vision large language models (VLLMs) describe images {i}; such VLLMs have limits.")
        for i in range(12)
    ]
    corpus = collect([*serving, *vision])
    vllm, vision_llms = corpus.find("vLLM"), corpus.find("VLLMs")
    assert vllm is not None and vision_llms is not None and vllm is not vision_llms
    assert vllm.n_docs == 12 and vision_llms.n_docs == 12 and corpus.find("VLLM") is vision_llms
    # one thing written in two cases (a title's capitals; all-caps in a title) stays one name
    titles = [_doc(200 + i, "We find that AI-driven tools help.", title="AI-Driven Tools") for i in range(12)]
    both = collect([*titles, *serving])
    assert both.find("AI-Driven") is both.find("AI-driven") and not both.cased
    same = [_doc(300 + i, f"We serve the model with VLLM on task {i}, as VLLM serving is fast.") for i in range(12)]
    merged = collect([*serving, *same])
    assert merged.find("vLLM") is merged.find("VLLM") and merged.find("vLLM").n_docs == 24  # type: ignore[union-attr]


def test_use_cues_area_shares_and_values_are_features() -> None:
    docs = [
        _doc(i, f"Our kernels are implemented in ZetaX and run on ZetaX GPUs with low latency for task {i}.")
        for i in range(4)
    ]
    row = features("ZetaX", collect(docs).names["zetax"])
    assert row["use=software"] > 0 and row["use=device"] > 0 and row["area=hw"] == AREA_WEIGHT and row["area=rl"] == 0.0
    measured = mentions("x", "It reduces TTFT by 2.1x and lowers the TTFT of 120 ms requests.")[0].features
    assert "R:num" in measured and "L:reduces" in measured
    mid = mentions("x", "We fit a Bradley-Terry model. Bradley-Terry models are old.")[0].features
    assert "abs_mid" in mid  # capitalised inside a sentence (not only at its start)
    assert "abs_mid" not in mentions("x", "Memory-Efficient training is hard.")[0].features


def _rare_kind_rows() -> tuple[list[dict[str, float]], list[str]]:
    """Many generic terms (g), methods (m), and a rare kind (3 systems) whose feature s also sits on 12 generic
    terms: alone against the generic labels the systems are outvoted."""
    rows = [{"g": 1.0}] * 60 + [{"m": 1.0}] * 30 + [{"s": 1.0, "t": 1.0}] * 3 + [{"s": 1.0}] * 12
    return rows, ["generic"] * 60 + ["method"] * 30 + ["system"] * 3 + ["generic"] * 12


def test_the_two_stage_model_says_name_or_generic_first_then_the_kind_among_the_names() -> None:
    rows, kinds = _rare_kind_rows()
    model = KindModel(two_stage=True).fit(rows, kinds)
    assert model._gate is not None and model._clf is not None
    assert list(model._gate.classes_) == ["generic", "name"] and "generic" not in list(model._clf.classes_)
    classes, proba = model.proba([{"g": 1.0}, {"m": 1.0}, {"s": 1.0, "t": 1.0}])
    assert classes[-1] == "generic" and set(classes) == {"generic", "method", "system"}
    assert np.allclose(proba.sum(axis=1), 1.0)  # P(kind) = P(name) P(kind | name), P(generic) = 1 - P(name)
    named = model._gate.predict_proba(model._vec.transform([{"m": 1.0}])[:, model._keep])[0, 1]  # type: ignore[union-attr]
    assert proba[1, classes.index("generic")] == pytest.approx(1 - named)
    said = [k for k, _ in model.predict([{"g": 1.0}, {"m": 1.0}])]
    assert said == ["generic", "method"]
    # among the names the system's feature t decides, not the 12 generic terms that share s
    among = model._clf.predict_proba(model._vec.transform([{"s": 1.0, "t": 1.0}])[:, model._keep])[0]  # type: ignore[union-attr]
    assert list(model._clf.classes_)[int(np.argmax(among))] == "system"
    # a threshold on P(name) instead of the product: 0 makes every row a name, above 1 every row generic
    everything = dataclasses.replace(model, gate=0.0)
    assert "generic" not in [k for k, _ in everything.predict(rows)]
    nothing = dataclasses.replace(model, gate=1.01)
    assert {k for k, _ in nothing.predict(rows)} == {"generic"}
    # too few kinds among the names for a second stage: one regression, as without the lever
    one = KindModel(two_stage=True).fit(rows[:90], kinds[:90])
    assert one._gate is None and set(one.proba([{"g": 1.0}])[0]) == {"generic", "method"}


def test_tuning_a_two_stage_model_fits_two_stages_in_the_inner_cross_validation() -> None:
    rows, kinds = _rare_kind_rows()
    tuned = tuned_model(rows, kinds, template=KindModel(two_stage=True, gate=0.5))
    assert tuned.two_stage and tuned.gate == 0.5 and tuned._gate is not None and tuned.method_margin >= 0.0
    plain = tuned_model(rows, kinds)
    assert not plain.two_stage and plain._gate is None


def test_soft_class_weights_lift_a_rare_kind() -> None:
    rows, kinds = _rare_kind_rows()
    systems = [{"s": 1.0, "t": 1.0}]

    def p_system(model: KindModel) -> float:
        classes, proba = model.fit(rows, kinds).proba(systems)
        return float(proba[0, classes.index("system")])

    plain, soft, strong = p_system(KindModel()), p_system(KindModel(balance=0.5)), p_system(KindModel(balance=1.0))
    assert plain < soft < strong and strong > 0.5
    # the weighted regressions without weights are scikit-learn's one-vs-rest
    x = np.array([[r.get(f, 0.0) for f in ("g", "m", "s", "t")] for r in rows])
    ours = WeightedOneVsRest(C, 1e-6, 0.0).fit(x, kinds).predict_proba(x)
    binary = LogisticRegression(C=C, solver="liblinear", tol=1e-6)
    theirs = OneVsRestClassifier(binary).fit(x, kinds).predict_proba(x)
    assert np.allclose(ours, theirs, atol=1e-3)


def test_a_hyphenated_expansion_counts_under_its_head_word() -> None:
    assert expansion_head("time-to-first-token") == "time" and expansion_head("mixture-of-experts") == "mixture"
    assert expansion_head("register-transfer-level") == "level" and expansion_head("optimization") == "optimization"
    counted = with_heads(Counter({"explast:time-to-first-token": 3, "explast:time": 2, "R:num": 1}), 4)
    assert counted["explast:time"] == 4 and counted["explast:time-to-first-token"] == 3  # capped at the documents
    plain = Counter({"explast:optimization": 2})
    assert with_heads(plain, 5) is plain  # nothing hyphenated: the same features
    docs = [_doc(i, f"The time-to-first-token (ZTFT) drops, and ZTFT is low in run {i}.") for i in range(4)]
    ev = collect(docs).names["ztft"]
    assert features("ZTFT", ev, heads=True)["use=measure"] > features("ZTFT", ev).get("use=measure", 0.0)
    assert "ctx=explast:time" in features("ZTFT", ev, heads=True) and "ctx=explast:time" not in features("ZTFT", ev)


def test_cross_validating_the_levers_keeps_each_folds_names_out() -> None:
    docs, labels = [], []
    for i in range(30):
        a = f"Qa{i}Vk"
        docs += [_doc(i * 10 + j, f"Results of {a} in study {j}.") for j in range(3)]
        labels.append((a, ("method", "benchmark", "generic")[i % 3]))
    corpus = collect(docs)
    variants = {"two-stage": Variant(two_stage=True, margin=0.0), "heads": LEVERS["expansion heads"]}
    cv = cross_validate(corpus, labels, k=5, variants=variants)
    assert all(len(p) == len(labels) and set(p) <= {"method", "benchmark", "generic"} for p in cv.predicted.values())


def _shipped(file: str) -> list[dict[str, object]]:
    text = resources.files("radar.analysis.names").joinpath("labels", file).read_text("utf-8")
    return [orjson.loads(line) for line in text.splitlines() if line.strip()]


def test_the_extra_training_names_are_rare_and_none_is_a_shared_label() -> None:
    extra = [r for f in EXTRA_LABEL_FILES for r in _shipped(f)]
    shared = {surface_key(str(r["name"])) for f in SHARED_LABEL_FILES for r in _shipped(f)}
    assert len(extra) >= 300 and {r["kind"] for r in extra} <= set(KINDS)
    assert not [r["name"] for r in extra if surface_key(str(r["name"])) in shared]  # no spelling of a shared name
    assert all(isinstance(r["count"], int) and 3 <= r["count"] < FREQUENT_POOL for r in extra)  # full-corpus papers
    assert len({surface_key(str(r["name"])) for r in extra}) == len(extra)
    assert len(load_labels()) == len(load_labels(files=SHARED_LABEL_FILES)) + len(extra)


@pytest.mark.slow
def test_no_extra_training_name_is_frequent_or_a_shared_name_in_the_bundled_snapshot() -> None:
    # the bundled snapshot's papers of the full corpus (18,518; the other 1,482 come from the systems-extra list,
    # data/SOURCES.md): a name's papers there are at most its papers in the full corpus, whose count
    # bench_names.py asserts; groups are compared, so no spelling of a shared name is an extra one
    snapshot = Path(__file__).resolve().parents[1] / "data" / "snapshot.jsonl.gz"
    docs = []
    with gzip.open(snapshot, "rb") as fh:
        for line in fh:
            d = orjson.loads(line)
            if d.get("source_repo") == "zhixin612/awesome-papers-LMsys":
                continue
            docs.append(SimpleNamespace(id=d["id"], title=d["title"], abstract=d["abstract"], published=d["published"]))
    corpus = collect(docs)
    # the benchmark's own check: no extra name's group or spelling key is a shared label's (it raises); found ones
    found = check_extra(corpus, load_labels(files=SHARED_LABEL_FILES), load_labels(files=EXTRA_LABEL_FILES))
    counts = [ev.n_docs for n, _ in found if (ev := corpus.find(n)) is not None]
    assert len(counts) > 100 and max(counts) < FREQUENT_POOL  # 3+ papers: 162 of them


def test_extra_training_labels_join_every_fold_and_are_never_evaluated(monkeypatch: pytest.MonkeyPatch) -> None:

    docs, labels, extra = [], [], []
    for i in range(30):
        a, b, c = f"Qa{i}Vk", f"Qb{i}Vk", f"Qc{i}Vk"
        docs += [_doc(i * 10 + j, f"Results of {a}, {b} and {c} in study {j}.") for j in range(3)]
        labels += [(a, "method" if i % 2 else "benchmark"), (b, "method" if i % 2 else "benchmark")]
        extra.append((c, "method" if i % 2 else "benchmark"))
    corpus = collect(docs)
    seen = _lexicons_seen(monkeypatch)
    cv = cross_validate(corpus, labels, k=5, variants={"n": Variant(margin=0.0)}, extra=[*extra, ("Absent", "org")])
    groups = {corpus.find(n).key for n, _ in extra}  # type: ignore[union-attr]
    assert len(seen) == 5 and all(groups <= lex for lex in seen)  # in every fold's lexicon (and training)
    assert cv.names == [n for n, _ in labels] and len(cv.predicted["n"]) == len(labels)  # scored: the labels only
    assert check_extra(corpus, labels, extra) == extra  # "Absent" (not in the corpus) is left out
    with pytest.raises(AssertionError, match="extra training names are evaluated names"):
        check_extra(corpus, labels, [("QA0VK", "method")])  # a shared label's name in another case
