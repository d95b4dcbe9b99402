"""Tagging: taxonomy as data, keyword rules, the trained model, eval, corrections, bad input."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import cast

import numpy as np
import pytest

from radar.analysis.tags.config import TaggingConfig
from radar.analysis.tags.errors import TaggingError
from radar.analysis.tags.keywords import KeywordMatcher
from radar.analysis.tags.model import best_threshold
from radar.analysis.tags.tagger import Vectors, decide, saved_model, tag_documents
from radar.analysis.tags.taxonomy import DEFAULT_TAXONOMY, load_taxonomy_file, parse_taxonomy
from radar.analysis.tags.training import (
    DEV2_LABELS,
    DEV3_LABELS,
    DEV_LABELS,
    SHIPPED_VECTORS,
    read_label_file,
    shipped_papers,
)
from radar.app import wiring
from radar.app.context import Radar
from radar.index.embedder import Embedder, document_text
from radar.index.embeddings import Embeddings
from radar.index.prebuilt import PrebuiltVectors
from radar.index.tags_table import Tags
from radar.store import Workspace
from tests.cli_helpers import run_cli
from tests.test_demo import MIN_COSINE  # int8 ONNX embedding depends on the batch; see there

TAXONOMY = load_taxonomy_file(DEFAULT_TAXONOMY)


@pytest.fixture(scope="module")
def tagged(indexed: Workspace, tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """A copy of the indexed workspace, tagged once (read-only for the tests that use it)."""
    from radar.app.cli import main

    root = tmp_path_factory.mktemp("tagged") / "ws"
    shutil.copytree(indexed.root, root)
    assert main(["--workspace", str(root), "tag"]) == 0
    return Workspace.open(root)


@pytest.fixture
def copy_of_tagged(tagged: Workspace, tmp_path: Path) -> Workspace:
    shutil.copytree(tagged.root, tmp_path / "ws")
    return Workspace.open(tmp_path / "ws")


def rows(ws: Workspace, sql: str, *params: object) -> list[tuple]:
    with sqlite3.connect(ws.db_path) as conn:
        return conn.execute(sql, params).fetchall()


# -- taxonomy and keywords ------------------------------------------------------------------------------


def test_default_taxonomy_has_the_labelling_guide_tags() -> None:
    assert len(TAXONOMY.names) == 10
    assert set(TAXONOMY.groups) == {"rl-post-training", "hardware-systems", "other"}
    assert "rl-policy-optimization" in TAXONOMY.groups["rl-post-training"]
    assert all(t.description and t.keywords for t in TAXONOMY.tags)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no [[tag]] entries"),
        ("[[tag]]\nname = 'Bad Name'\nkeywords = ['x']", "lower-case"),
        ("[[tag]]\nname = 'a'\nkeywords = ['x']\n[[tag]]\nname = 'a'\nkeywords = ['y']", "defined twice"),
        ("[[tag]]\nname = 'a'", "neither a description nor keywords"),
        ("[[tag]]\nname = 'a'\nkeywords = ['x']\ncolour = 'red'", "unknown key"),
        ("[[tag]\nname = 'a'", "not valid TOML"),
    ],
)
def test_bad_taxonomy_is_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(TaggingError, match=message.replace("[", r"\[")):
        parse_taxonomy(text, "t.toml")


def test_unknown_tag_names_list_the_valid_ones() -> None:
    with pytest.raises(TaggingError) as err:
        TAXONOMY.check(["llm-reasoning", "kernel-stuff"])
    assert "kernel-stuff" in str(err.value) and "kernels-compilers" in str(err.value)


def test_keywords_acronyms_are_case_sensitive_and_wildcards_match_word_endings() -> None:
    tax = parse_taxonomy(
        "[[tag]]\nname = 'rl'\nkeywords = ['GRPO', 'policy optimization', 'quantiz*', 'Dr. GRPO']", "t"
    )
    m = KeywordMatcher(tax)
    assert m.counts("GRPO-based training")[0] == 1
    assert m.counts("grpo is lower case here")[0] == 0  # an acronym needs its capitals
    assert m.counts("Policy Optimization and quantized, quantization")[0] == 3
    assert m.counts("We study Dr. GRPO")[0] == 2  # the phrase and the acronym inside it
    assert m.counts("the policy")[0] == 0  # a phrase needs all its words


def test_best_threshold_sits_inside_the_plateau() -> None:
    truth = np.array([1, 1, 1, 0, 0, 0, 0, 0], dtype=bool)
    probs = np.array([0.9, 0.8, 0.7, 0.3, 0.2, 0.1, 0.1, 0.05])
    t = best_threshold(probs, truth)
    assert 0.3 < t <= 0.7


def test_best_threshold_meets_a_precision_or_recall_preference() -> None:
    rng = np.random.default_rng(0)
    truth = rng.random(400) < 0.2
    probs = np.clip(truth * 0.25 + rng.random(400) * 0.7, 0, 1)  # overlapping classes
    free = best_threshold(probs, truth)

    def precision_recall(t: float) -> tuple[float, float]:
        pred = probs >= t
        return float((pred & truth).sum() / pred.sum()), float((pred & truth).sum() / truth.sum())

    strict = best_threshold(probs, truth, min_precision=0.9)
    assert strict > free and precision_recall(strict)[0] >= 0.9
    loose = best_threshold(probs, truth, min_recall=0.95)
    assert loose < free and precision_recall(loose)[1] >= 0.95
    # unreachable: the closest it can get (highest precision), not a silent fallback to F1
    assert precision_recall(best_threshold(probs, truth, min_precision=1.01))[0] >= precision_recall(strict)[0]


def test_tagging_preferences_parse_and_bad_values_are_one_line() -> None:
    cfg = TaggingConfig.from_section({"min_precision": {"reward-modeling": 0.8}, "min_recall": {"graphics-xr": 1}})
    assert cfg.preference("reward-modeling") == (0.8, 0.0) and cfg.preference("graphics-xr") == (0.0, 1.0)
    assert cfg.preference("llm-reasoning") == (0.0, 0.0)
    from radar.store.errors import ConfigError

    with pytest.raises(ConfigError, match="table of tag = number"):
        TaggingConfig.from_section({"min_precision": 0.8})
    with pytest.raises(ConfigError, match="between 0 and 1"):
        TaggingConfig.from_section({"min_recall": {"graphics-xr": 1.5}})


# -- label files ----------------------------------------------------------------------------------------


def test_shipped_dev_labels_are_the_shared_ones_and_valid() -> None:
    labels = read_label_file(DEV_LABELS, TAXONOMY)
    assert len(labels) == 750
    assert sum(bool(t) for t in labels.values()) > 300
    dev2 = read_label_file(DEV2_LABELS, TAXONOMY)
    assert len(dev2) == 750 and not set(dev2) & set(labels)
    assert sum("rl-policy-optimization" in t for t in dev2.values()) == 49
    dev3 = read_label_file(DEV3_LABELS, TAXONOMY)  # the boundary papers: drawn from the bundled snapshot
    assert len(dev3) == 398 and not set(dev3) & (set(labels) | set(dev2))
    assert sum("rl-policy-optimization" in t for t in dev3.values()) == 54
    shared = Path(__file__).resolve().parents[1].parent / "shared" / "labels"
    for path in (DEV_LABELS, DEV2_LABELS, DEV3_LABELS):
        if (shared / path.name).is_file():  # CI has the shared folder beside the checkout; a user's install not
            assert path.read_bytes() == (shared / path.name).read_bytes(), f"{path.name} differs from the shared one"
    texts = shipped_papers()
    assert set(labels) | set(dev2) | set(dev3) <= set(texts)
    assert all(title and abstract for title, abstract in texts.values())


def test_damaged_shipped_vectors_or_cache_are_embedded_afresh(tmp_path: Path) -> None:
    """A truncated shipped vectors file and a corrupt example-vector cache are ignored, not a traceback: np.load
    raises zipfile.BadZipFile / zlib.error there (neither an OSError nor a ValueError)."""
    data = SHIPPED_VECTORS.read_bytes()
    cut = tmp_path / "cut.npz"
    cut.write_bytes(data[: len(data) // 2])

    class Ones:
        def embed(self, batch: list[str]) -> np.ndarray:
            return np.ones((len(batch), 4), dtype=np.float32)

    papers = shipped_papers()
    ids = sorted(papers)[:5]
    vectors = Vectors("m", "fp", tmp_path / "cache", lambda: cast(Embedder, Ones()), shipped=cut)
    ws, _ = Workspace.init(tmp_path / "ws")
    with ws.store() as store:
        assert vectors.for_texts(store, ids, papers).shape == (5, 4)
        vectors.cache_path().write_bytes(data[: len(data) // 3])  # a damaged cache too
        assert vectors.for_texts(store, ids, papers).shape == (5, 4)


def test_shipped_labeled_vectors_are_what_embedding_gives_and_are_used(tmp_path: Path) -> None:
    """analysis/tags/labels/vectors.npz (data/build_embeddings.py --labels) is stamped with the default model,
    holds every shipped paper, and gives the vectors embedding from scratch gives; `radar tag` then embeds none
    of them, and under another model id it embeds them all."""
    ws, _ = Workspace.init(tmp_path / "ws")
    with ws.store() as store:
        real = wiring.tag_vectors(Radar(ws), store, allow_empty=True)
    shipped = PrebuiltVectors.open(SHIPPED_VECTORS)
    assert shipped.model_id == real.model_id, "rebuild it: data/build_embeddings.py --labels"
    papers = shipped_papers()
    assert len(shipped) == len(papers)
    sample = sorted(papers)[::75]  # 20 papers
    texts = {i: papers[i] for i in sample}
    fresh = real.embed([document_text(*texts[i]) for i in sample])
    embedded: list[int] = []

    def counting() -> Embedder:
        embedder = real.make_embedder()

        class Counting:
            def embed(self, batch: list[str]) -> np.ndarray:
                embedded.append(len(batch))
                return embedder.embed(batch)

        return cast(Embedder, Counting())

    with ws.store() as store:
        reused = Vectors(real.model_id, real.precision, tmp_path / "cache", counting).for_texts(store, sample, texts)
        assert embedded == []
        cosine = np.sum(reused * fresh, axis=1) / np.linalg.norm(fresh, axis=1) / np.linalg.norm(reused, axis=1)
        assert cosine.min() >= MIN_COSINE, "rebuild it: data/build_embeddings.py --labels"
        other = Vectors(real.model_id + "/other", real.precision, tmp_path / "cache", counting)
        other.for_texts(store, sample, texts)
        assert embedded == [len(sample)]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": "2401.00001", "tags": ["quantum-stuff"]}\n', "unknown tag"),
        ('{"id": "2401.00001", "tags": "llm-reasoning"}\n', "expected a JSON line"),
        ("not json\n", ":1: expected a JSON line"),
        ('{"id": "a", "tags": []}\n{"id": "a", "tags": []}\n', "labeled twice"),
        ("\n", "has no labels"),
    ],
)
def test_bad_label_file_is_one_clear_error(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(content)
    with pytest.raises(TaggingError, match=message):
        read_label_file(path, TAXONOMY)


# -- the tagger on a real indexed workspace -------------------------------------------------------------


def test_tag_needs_embeddings_first(workspace: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    res = run_cli(capsys, "--workspace", str(workspace.root), "tag")
    assert res.code == 1 and "run `radar index` first" in res.err


def test_tag_decides_every_embedded_document_once(tagged: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    n_docs = rows(tagged, "SELECT COUNT(*) FROM documents")[0][0]
    assert rows(tagged, "SELECT COUNT(*) FROM tag_state")[0][0] == n_docs
    decisions = rows(tagged, "SELECT tag, score, origin FROM document_tags")
    assert decisions and {o for _, _, o in decisions} == {"model"}
    assert {t for t, _, _ in decisions} <= set(TAXONOMY.names)
    assert 0.05 < len({d for (d,) in rows(tagged, "SELECT DISTINCT doc_id FROM document_tags")}) / n_docs < 0.9
    with Workspace.open(tagged.root).store() as store:
        model = saved_model(wiring.tag_env(Radar(tagged), store))
    assert model is not None
    thresholds = dict(zip(model.names, model.thresholds(), strict=True))
    assert all(score >= thresholds[tag] - 1e-6 for tag, score, _ in decisions)
    again = run_cli(capsys, "--workspace", str(tagged.root), "tag", "--json").json()
    assert again["decided"] == 0 and again["trained"] is False


def test_tags_are_sensible_on_known_papers(tagged: Workspace) -> None:
    """Papers whose title names the topic get the tag (a sanity check, not the quality measure)."""
    got = dict(
        rows(
            tagged,
            "SELECT d.title, group_concat(t.tag) FROM documents d JOIN document_tags t "
            "ON t.doc_id = d.id GROUP BY d.id",
        )
    )
    titled = {
        "speculative decoding": "inference-serving",
        "quantization": "model-compression",
        "gaussian splatting": "graphics-xr",
    }
    checked = 0
    for title, tags in got.items():
        for phrase, tag in titled.items():
            if phrase in title.lower():
                checked += 1
                assert tag in tags, (title, tags)
    assert checked >= 3


def test_search_filters_by_tag_after_tagging(tagged: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    res = run_cli(
        capsys,
        "--workspace",
        str(tagged.root),
        "search",
        "efficient serving of large language models",
        "--tag",
        "inference-serving",
        "--json",
    )
    assert res.code == 0
    hits = res.json()
    assert hits and all("inference-serving" in h["tags"] for h in hits)


@pytest.fixture
def two_folds(monkeypatch: pytest.MonkeyPatch) -> None:
    """`tag eval` refits the model once per fold (about 4 s each); what these tests check (every trained-on
    document scored by a model without it, the table, nothing stored changes) needs two folds, not five."""
    from radar.analysis.tags import evaluate

    monkeypatch.setattr(evaluate, "FOLDS", 2)


def test_eval_prints_per_tag_scores_out_of_fold(
    tagged: Workspace, capsys: pytest.CaptureFixture[str], tmp_path: Path, two_folds: None
) -> None:
    labels = tmp_path / "labels.jsonl"
    dev = [json.loads(line) for line in DEV_LABELS.read_text().splitlines()][:120]
    labels.write_text("".join(json.dumps(d) + "\n" for d in dev) + '{"id": "9999.99999", "tags": []}\n')
    before = rows(tagged, "SELECT COUNT(*) FROM document_tags")
    res = run_cli(capsys, "--workspace", str(tagged.root), "tag", "eval", str(labels), "--json")
    assert res.code == 0, res.err
    out = res.json()
    assert out["documents"] == 120 and out["unknown_ids"] == ["9999.99999"]
    assert out["out_of_fold"] == 120  # these papers are in the training set: scored by models without them
    assert set(out["tags"]) == set(TAXONOMY.names)
    assert {"precision", "recall", "f1", "support"} <= set(out["tags"]["llm-reasoning"])
    assert 0.3 < out["macro_f1"] <= 1.0
    assert "9999.99999" in res.err  # skipped ids are said
    assert rows(tagged, "SELECT COUNT(*) FROM document_tags") == before  # eval changes nothing stored


def test_eval_bad_label_files_change_nothing(
    tagged: Workspace, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    before = rows(tagged, "SELECT * FROM document_tags ORDER BY 1, 2")
    unknown_tag = tmp_path / "a.jsonl"
    unknown_tag.write_text('{"id": "2503.14476", "tags": ["robots"]}\n')
    res = run_cli(capsys, "--workspace", str(tagged.root), "tag", "eval", str(unknown_tag))
    assert res.code == 1 and "unknown tag(s) robots" in res.err and "valid tags:" in res.err
    no_known = tmp_path / "b.jsonl"
    no_known.write_text('{"id": "1234.5678", "tags": []}\n')
    res = run_cli(capsys, "--workspace", str(tagged.root), "tag", "eval", str(no_known))
    assert res.code == 1 and "none of the 1 ids" in res.err
    res = run_cli(capsys, "--workspace", str(tagged.root), "tag", "eval", str(tmp_path / "missing.jsonl"))
    assert res.code == 1 and "cannot read the label file" in res.err
    assert rows(tagged, "SELECT * FROM document_tags ORDER BY 1, 2") == before


def test_fix_applies_at_once_and_wins_over_retraining(
    copy_of_tagged: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = str(copy_of_tagged.root)
    doc_id, tag = rows(copy_of_tagged, "SELECT doc_id, tag FROM document_tags LIMIT 1")[0]
    other = next(t for t in TAXONOMY.names if t != tag)
    res = run_cli(capsys, "--workspace", ws, "tag", "fix", doc_id, f"-{tag}", f"+{other}", "--json")
    assert res.code == 0, res.err
    assert tag not in res.json()["tags"] and other in res.json()["tags"]
    assert run_cli(capsys, "--workspace", ws, "tag", "--retrain").code == 0
    tags = dict(rows(copy_of_tagged, "SELECT tag, origin FROM document_tags WHERE doc_id = ?", doc_id))
    assert tag not in tags and tags[other] == "user"
    assert sorted(rows(copy_of_tagged, "SELECT tag, value FROM tag_corrections WHERE doc_id = ?", doc_id)) == sorted(
        [(tag, 0), (other, 1)]
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["tag", "fix", "2503.99999", "+llm-reasoning"], "no document"),
        (["tag", "fix", "ID", "+not-a-tag"], "unknown tag(s) not-a-tag"),
        (["tag", "fix", "ID", "llm-reasoning"], "write +TAG"),
        (["tag", "fix", "ID"], "nothing to record"),
        (["tag", "fix", "ID", "+llm-reasoning", "-llm-reasoning"], "both added and removed"),
    ],
)
def test_fix_bad_input(tagged: Workspace, capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    doc_id = rows(tagged, "SELECT id FROM documents LIMIT 1")[0][0]
    res = run_cli(capsys, "--workspace", str(tagged.root), *[doc_id if a == "ID" else a for a in argv])
    assert res.code == 1 and message in res.err


@pytest.mark.slow
def test_a_handful_of_corrections_moves_a_tags_decisions(
    copy_of_tagged: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    """Eight speech/audio papers marked +graphics-xr: after a retrain, the other speech papers' graphics-xr
    scores rise: the model learned from the corrections."""
    ws = copy_of_tagged
    docs = rows(ws, "SELECT id, title, abstract FROM documents")
    speech = [d for d in docs if "speech" in (d[1] + d[2]).lower() or "audio" in (d[1] + d[2]).lower()]
    assert len(speech) >= 14
    corrected, probe = speech[:8], speech[8:]
    with ws.store() as store:
        env = wiring.tag_env(Radar(ws), store)
        vectors = env.vectors

        def scores(papers: list[tuple]) -> np.ndarray:
            model = saved_model(env)
            vecs = vectors.for_texts(store, [p[0] for p in papers], {p[0]: (p[1], p[2]) for p in papers})
            j = model.names.index("graphics-xr")
            return decide(model, [p[1] for p in papers], [p[2] for p in papers], vecs)[:, j]

        before = scores(probe)
        for doc_id, _, _ in corrected:
            assert run_cli(capsys, "--workspace", str(ws.root), "tag", "fix", doc_id, "+graphics-xr").code == 0
        assert run_cli(capsys, "--workspace", str(ws.root), "tag", "--retrain").code == 0
        after = scores(probe)
    # the 1,500 shipped labels outweigh 8 corrections more than 750 did: the mean more than doubles
    assert after.mean() > 2 * before.mean(), (before.mean(), after.mean())
    assert (after > before).mean() > 0.8
    for doc_id, _, _ in corrected:
        assert ("graphics-xr", "user") in rows(ws, "SELECT tag, origin FROM document_tags WHERE doc_id = ?", doc_id)


def test_new_tags_learn_from_keywords_or_their_description(
    copy_of_tagged: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    """A user-added tag with keywords and no labels trains on weak labels; one with only a description is
    zero-shot; both are decided, with origin "rule"; changing the taxonomy retrains on the next run."""
    ws = copy_of_tagged
    custom = ws.root / "taxonomy.toml"
    custom.write_text(
        DEFAULT_TAXONOMY.read_text()
        + """
[[tag]]
name = "robotics"
group = "other"
keywords = ["robot*", "manipulation", "embodied"]

[[tag]]
name = "medical-imaging"
group = "other"
description = "Medical image analysis: radiology, MRI, CT, pathology slides, segmentation of organs and lesions."
"""
    )
    ws.config_path.write_text(ws.config_path.read_text() + '\n[tagging]\ntaxonomy = "taxonomy.toml"\n')
    res = run_cli(capsys, "--workspace", str(ws.root), "tag", "--json")
    assert res.code == 0, res.err
    out = res.json()
    assert out["trained"] is True and out["decided"] == rows(ws, "SELECT COUNT(*) FROM documents")[0][0]
    assert out["strategies"]["robotics"] == "weak" and out["strategies"]["medical-imaging"] == "zero-shot"
    assert out["strategies"]["llm-reasoning"] == "model"
    robot = [
        t
        for (t,) in rows(
            ws,
            "SELECT lower(d.title || ' ' || d.abstract) FROM documents d JOIN document_tags t "
            "ON t.doc_id = d.id WHERE t.tag = 'robotics' AND t.origin = 'rule'",
        )
    ]
    assert robot
    assert sum("robot" in t or "embodied" in t or "manipulat" in t for t in robot) / len(robot) > 0.5


def test_empty_taxonomy_file_is_refused_and_nothing_changes(
    copy_of_tagged: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = copy_of_tagged
    before = rows(ws, "SELECT * FROM document_tags ORDER BY 1, 2")
    (ws.root / "empty.toml").write_text("# nothing yet\n")
    ws.config_path.write_text(ws.config_path.read_text() + '\n[tagging]\ntaxonomy = "empty.toml"\n')
    res = run_cli(capsys, "--workspace", str(ws.root), "tag")
    assert res.code == 1 and "no [[tag]] entries" in res.err
    assert rows(ws, "SELECT * FROM document_tags ORDER BY 1, 2") == before


def test_interrupted_tagging_resumes_where_it_stopped(
    copy_of_tagged: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = copy_of_tagged
    calls = []

    def stop_after_first_batch(done: int, total: int) -> None:
        calls.append(done)
        raise KeyboardInterrupt

    original = Tags.candidates
    monkeypatch.setattr(Tags, "candidates", lambda self, *a, **k: original(self, *a, **{**k, "batch": 50}))
    with ws.store() as store, pytest.raises(KeyboardInterrupt):
        tag_documents(store, wiring.tag_env(Radar(ws), store), retrain=True, progress=stop_after_first_batch)
    with ws.store() as store:
        # the retrained model was saved: it continues
        version = tag_documents(store, wiring.tag_env(Radar(ws), store)).version
        states = rows(ws, "SELECT tagger, COUNT(*) FROM tag_state GROUP BY 1")
    assert calls == [50]
    assert states == [(version, rows(ws, "SELECT COUNT(*) FROM documents")[0][0])]


def test_tag_commands_have_help(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["tag", "--help"], ["tag", "eval", "--help"], ["tag", "fix", "--help"]):
        res = run_cli(capsys, *argv)
        assert res.code == 0 and "usage: radar tag" in res.out


def test_eval_works_before_indexing(
    workspace: Workspace, capsys: pytest.CaptureFixture[str], tmp_path: Path, two_folds: None
) -> None:
    """A held-out label file can be scored on a workspace that was only imported: what is needed is embedded."""
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(line + "\n" for line in DEV_LABELS.read_text().splitlines()[200:230]))
    res = run_cli(capsys, "--workspace", str(workspace.root), "tag", "eval", str(labels))  # the table form
    assert res.code == 0, res.err
    assert "tag evaluation: 30 documents (30 scored out of fold)" in " ".join(res.out.split())
    assert "macro" in res.out and "keyword F1" in res.out and "rl-policy-optimization" in res.out
    assert rows(workspace, "SELECT COUNT(*) FROM document_tags") == [(0,)]


def test_review_queue_asks_about_the_least_sure_papers_in_the_important_tags(
    copy_of_tagged: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    from radar.analysis.tags.review import important_tags, review_queue, uncertainty

    ws = copy_of_tagged
    important = important_tags(TAXONOMY)
    assert "rl-policy-optimization" in important and "graphics-xr" not in important
    with ws.store() as store:
        env = wiring.tag_env(Radar(ws), store)
        queue = review_queue(store, env, k=16)
        model = saved_model(env)
        sample = Embeddings(store).sample_embedded(env.vectors.model_id, 5000)
        vecs = np.stack([np.frombuffer(r.vector, dtype=np.float32) for r in sample])
        margins = uncertainty(model, decide(model, [r.title for r in sample], [r.abstract for r in sample], vecs))
    assert len(queue) == 16 and len({q.doc_id for q in queue}) == 16
    assert {q.tag for q in queue} == set(important[:8])  # the important tags in turn
    shipped = (DEV_LABELS, DEV2_LABELS, DEV3_LABELS)
    labeled = {json.loads(line)["id"] for path in shipped for line in path.read_text().splitlines()}
    assert not {q.doc_id for q in queue} & labeled  # papers with a label are not asked
    free = np.array([r.doc_id not in labeled for r in sample])
    for item in queue:  # each is among the least sure unlabeled papers for its tag
        j = model.names.index(item.tag)
        mine = uncertainty(model, np.array([[item.score if n == item.tag else 0.5 for n in model.names]]))[0, j]
        assert (margins[free, j] < mine - 1e-6).sum() <= 3, item
    first = queue[0]
    change = f"-{first.tag}" if first.tagged else f"+{first.tag}"
    assert run_cli(capsys, "--workspace", str(ws.root), "tag", "fix", first.doc_id, change).code == 0
    with ws.store() as store:
        again = review_queue(store, wiring.tag_env(Radar(ws), store), k=16, tags=[first.tag])
    assert (first.doc_id, first.tag) not in {(q.doc_id, q.tag) for q in again}  # a corrected pair is not asked again
    with ws.store() as store, pytest.raises(TaggingError, match="unknown tag"):
        review_queue(store, wiring.tag_env(Radar(ws), store), tags=["robots"])


def test_unknown_tag_in_a_preference_is_one_line(copy_of_tagged: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    ws = copy_of_tagged
    ws.config_path.write_text(ws.config_path.read_text() + '\n[tagging]\nmin_precision = {"robots" = 0.9}\n')
    res = run_cli(capsys, "--workspace", str(ws.root), "tag", "--retrain")
    assert res.code == 1 and "min_precision names unknown tag(s) robots" in res.err and "valid tags" in res.err
