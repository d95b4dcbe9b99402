"""Contributions per paper: candidates, the learned model (stored as JSON), the rule baseline, the grouped
evaluation, and the incremental contributions table."""

from __future__ import annotations

import dataclasses
from dataclasses import replace
from pathlib import Path

import msgspec
import orjson
import pytest

from radar.analysis.contributions import evaluate
from radar.analysis.contributions.errors import ContributionsError
from radar.analysis.contributions.extract import (
    CALLED,
    COMPARE,
    INTRO,
    LINEAGE,
    _finditer,
    extract,
    long_form,
    title_prefix,
)
from radar.analysis.contributions.features import head_kinds, np_head
from radar.analysis.contributions.find import changes_line, contribution_of
from radar.analysis.contributions.labels import Label, Training, disjoint, load_labeled, load_training, parse_labels
from radar.analysis.contributions.linear import encode
from radar.analysis.contributions.model import ContributionModel, fit_shipped, shipped_model, train
from radar.analysis.contributions.rules import rule_decision, rule_name
from radar.analysis.contributions.table import Contributions
from radar.analysis.contributions.update import update_contributions
from radar.crawler.documents import Document, Documents
from radar.store import Store, Workspace
from tests.snapshot_data import snapshot_documents

# papers of the bundled snapshot the issue names: what each introduces
KNOWN = {
    "2503.14476": "DAPO",
    "2507.18071": "GSPO",
    "2509.22611": "QAE",
    "2509.18851": "NGRPO",
    "2509.21880": "RL-ZVP",
    "2509.19803": "VCRL",
    "2509.21240": "Tree-GRPO",
}


def snapshot_docs(ids: set[str]) -> dict[str, Document]:
    return {d.id: d for d in snapshot_documents(lambda r: r["id"] in ids)}


# -- extraction and the rule baseline ---------------------------------------------------------------------
def test_title_prefix_and_acronym_long_forms() -> None:
    assert title_prefix("QAE: Quantile Advantage Estimation") == "QAE"
    assert title_prefix("Re:Form -- Reducing Human Priors in Verification") == "Re:Form"
    assert title_prefix("Survey: what we know about RL") == ""  # a generic head is not a name
    assert title_prefix("A Very Long Head Of Five Words: subtitle") == ""
    assert long_form("GSPO", "we propose Group Sequence Policy Optimization") == "Group Sequence Policy Optimization"
    assert long_form("RL-ZVP", "we introduce RL with Zero-Variance Prompts") == "RL with Zero-Variance Prompts"
    assert long_form("XYZ", "a method for ranking") == ""


def test_candidates_carry_where_they_come_from() -> None:
    ex = extract(
        "Harder Is Better: Difficulty-Aware GRPO",
        "Group Relative Policy Optimization (GRPO) underweights hard questions. We propose Difficulty-Aware "
        "Group Policy Optimization (DGPO), which rebalances advantages, and compare it with DAPO.",
    )
    by = {c.surface: c for c in ex.candidates}
    assert "src:defined" in by["DGPO"].features and any(f.startswith("intro:") for f in by["DGPO"].features)
    assert by["DGPO"].expansion == "Difficulty-Aware Group Policy Optimization"
    assert "compared" in by["DAPO"].features
    assert "src:defined" in by["GRPO"].features and not any(f.startswith("intro:") for f in by["GRPO"].features)
    assert "p:intro_verb" in ex.paper


def test_names_the_abstract_writes_in_lower_case_or_after_our_proposed() -> None:
    """Min-p sampling, aligned probing (the title capitalises the name the abstract introduces in lower case),
    Gated DeltaNet ("our proposed architecture, X,"): each is a candidate with the introduction's own cues; a
    title phrase the verb does not introduce as a whole ("the gated delta rule") is not."""
    ex = extract(
        "Turning Up the Heat: Min-p Sampling for Creative and Coherent LLM Outputs",
        "Popular methods like top-p struggle. We propose min-p sampling, a dynamic truncation method that scales "
        "the threshold.",
    )
    by = {c.surface: c for c in ex.candidates}
    assert {"src:title_lower", "intro:0-2", "intro&apposition", "in_title"} <= by["Min-p Sampling"].features
    ex = extract(
        "Aligned Probing: Relating Toxic Behavior and Model Internals", "We introduce aligned probing, a new framework."
    )
    aligned = {c.surface: c for c in ex.candidates}["Aligned Probing"]
    assert {"src:prefix", "intro:0-2", "intro&apposition"} <= aligned.features
    ex = extract(
        "Gated Delta Networks: Improving Mamba2 with Delta Rule",
        "We introduce the gated delta rule and a parallel training algorithm. Our proposed architecture, Gated "
        "DeltaNet, consistently surpasses Mamba2 and DeltaNet.",
    )
    by = {c.surface: c for c in ex.candidates}
    assert {"src:after_verb", "after_our", "intro&apposition"} <= by["Gated DeltaNet"].features
    assert "Gated Delta" not in by  # "the gated delta rule" goes on past the title's words
    # what the paper uses, not what it introduces: no proposal word before "our model", a capitalised noun
    ex = extract("X: Y", "We fine-tune our model, Qwen2.5-Math-7B, on math. Our optimizer, AdamW, is tuned.")
    assert all("src:after_verb" not in c.features for c in ex.candidates)
    # a title phrase the abstract mentions in lower case without introducing it keeps no abstract evidence
    ex = extract("Test-Time Compute: from System-1 to System-2", "We survey how test-time compute is spent.")
    prefix = {c.surface: c for c in ex.candidates}["Test-Time Compute"]
    assert "abs_count:0" in prefix.features and not any(f.startswith("intro:") for f in prefix.features)
    # the long form's words mostly in the title: EVA's, not LoRA's "low-rank adaptation" (one word of three)
    ex = extract(
        "One Initialization to Rule them All: Fine-tuning via Explained Variance Adaptation",
        "The most used method is low-rank adaptation (LoRA). We call our new method Explained Variance Adaptation "
        "(EVA).",
    )
    by = {c.surface: c for c in ex.candidates}
    assert "expansion_in_title" in by["EVA"].features and "expansion_in_title" not in by["LoRA"].features


def test_rule_baseline_reads_title_prefix_then_we_propose() -> None:
    assert rule_name("QAE: Quantile Advantage Estimation", "We study entropy.") == "QAE"
    assert rule_name("Entropy-safe reasoning", "We propose Quantile Advantage Estimation (QAE), a ...") == "QAE"
    assert rule_name("A study of RL", "We analyse how GRPO behaves.") == ""
    name, kind, area, _ = rule_decision("Bench: a benchmark for RL in LLMs", "We introduce a dataset.")
    assert (name, kind, area) == ("Bench", "benchmark", "rl-post-training")


def test_changes_line_is_the_abstracts_own_clause() -> None:
    abstract = (
        "RL for LLMs is unstable. To address this, we propose Quantile Advantage Estimation (QAE), which replaces "
        "the group mean baseline with a group-wise K-quantile baseline. Results improve."
    )
    line = changes_line("Quantile Advantage Estimation for Entropy-Safe Reasoning", abstract, "QAE")
    assert line == (
        "Quantile Advantage Estimation (QAE), which replaces the group mean baseline with a group-wise K-quantile "
        "baseline"
    )  # the framing ("To address this, we propose") is cut
    assert changes_line("QAE: Quantile Advantage Estimation", "No sentence names it.", "QAE") == (
        "Quantile Advantage Estimation"
    )


def test_noun_phrase_heads_read_past_hyphenated_words_and_long_forms() -> None:
    """ "On-Device" is not the preposition "on" (the head stays "accelerator"); a spelled-out long form names
    the kind ("... Language Agent (DOLA)": system), except a "... Model", which is an architecture as often as
    a checkpoint."""
    assert np_head("A 4.66 TFLOPS/W Continual On-Device Learning Accelerator with Kronecker Encoders") == "accelerator"
    assert np_head("on-device learning (ODL) accelerator designed for continual learning") == "accelerator"
    assert np_head("a framework based on policy optimization") == "framework"

    def kinds(title: str, abstract: str, name: str) -> set[str]:
        ex = extract(title, abstract)
        return head_kinds(ex, next(c for c in ex.candidates if c.surface == name))

    agent = "To address this, we introduce Dose Optimization Language Agent (DOLA), which plans dose treatments."
    assert kinds("Autonomous Radiotherapy Planning", agent, "DOLA") == {"system"}
    ssm = "We propose the Core-Periphery State Space Model (CP-SSM), which classifies functional connectomes."
    assert kinds("Core-Periphery Guided Classification", ssm, "CP-SSM") == set()


@pytest.mark.parametrize(
    "text",
    [
        "Here we Propose FooNet, called “Bar”, which OUTPERFORMS PPO (based on GRPO).",
        "We İntroduce FooNet, compared with GRPO.",  # lower() lengthens İ: the positions would shift
        "We ıntroduce FooNet and propoſe BarNet, compared with GRPO.",  # ı ſ: IGNORECASE's i and s, not lower()'s
        "The 3 \u212a-means baselines such as GRPO; we dubbed it Zed.",  # Kelvin sign: lower() gives k
    ],
)
def test_cue_patterns_find_the_same_matches_on_the_lowered_text(text: str) -> None:
    """The cue patterns matched case-sensitively on the lower-cased text find what ``re.IGNORECASE`` finds."""
    for rx in (INTRO, CALLED, COMPARE, LINEAGE):
        expected = [(m.span(), m.group().lower()) for m in rx.finditer(text)]
        assert [(m.span(), m.group().lower()) for m in _finditer(rx, text, text.lower())] == expected, rx.pattern


# -- the model ----------------------------------------------------------------------------------------------
def test_the_issues_new_rl_methods_are_introduced_under_their_names() -> None:
    """DAPO, GSPO and 2025-W39's new RL methods (all but GSPO unseen by the model: not labeled papers): each
    paper introduces its method under its own name, in the RL post-training area."""
    labeled = {p.label.doc_id for p in load_labeled()}
    assert labeled & KNOWN.keys() == {"2507.18071"}
    docs = snapshot_docs(set(KNOWN))
    for doc_id, name in KNOWN.items():
        c = contribution_of(docs[doc_id])
        assert (c.introduces, c.name, c.kind, c.area) == (True, name, "method", "rl-post-training"), (doc_id, c)
        assert c.model == shipped_model().version and c.changes


def test_a_survey_introduces_nothing() -> None:
    doc = Document(
        id="x1",
        kind="paper",
        source="t",
        title="Stop Overthinking: A Survey on Efficient Reasoning for Large Language Models",
        abstract="In this paper, we provide the first structured survey of efficient reasoning in LLMs. We "
        "categorize existing works into model-based, output-based and prompt-based directions.",
        published="2025-03-20",
    )
    c = contribution_of(doc)
    assert not c.introduces and c.name == "" and c.kind == "" and c.changes == ""


def test_model_round_trips_as_json_and_a_damaged_file_is_one_line() -> None:
    m = shipped_model()
    again = ContributionModel.decode(encode(m))
    assert again.version == m.version and encode(again) == encode(m)
    with pytest.raises(ContributionsError, match="rebuild it with"):
        ContributionModel.decode(b'{"code_version": "1", "name": {}}')
    with pytest.raises(ContributionsError, match="code version"):
        ContributionModel.decode(orjson.dumps({**orjson.loads(encode(m)), "code_version": "0"}))


@pytest.mark.slow
def test_shipped_model_is_what_the_shipped_labels_train() -> None:
    """model.json is not stale: fitting on the shipped labels gives the same model (and version)."""
    assert fit_shipped(load_labeled(), load_training()).version == shipped_model().version


def test_training_labels_are_disjoint_from_what_is_measured() -> None:
    """The shipped training-only labels share no week and no paper with the measured weeks, and a label file that
    did would be refused in one line (a measured paper trained on is no held-out figure)."""
    measured, training = load_labeled(), load_training()
    assert training.more and training.partial
    disjoint(measured, training)  # the shipped files: no error
    leaked = Training(training.more, [*training.partial, measured[0]])
    with pytest.raises(ContributionsError, match=measured[0].label.week):
        disjoint(measured, leaked)
    moved = replace(measured[1], label=replace(measured[1].label, week="1999-W01"))  # same paper, another week
    with pytest.raises(ContributionsError, match=moved.label.doc_id):
        disjoint(measured, Training([moved], []))


def test_partial_labels_train_what_they_label_and_nothing_else() -> None:
    """Papers labeled only for what they introduce, its name, kind and area train those parts: the builds-on and
    also parts are what the fully labeled papers alone give."""
    full = load_labeled()[:120]
    partial = load_training().partial[:120]
    alone, more = train(full), train(full, partial=partial)
    assert more.builds == alone.builds and more.also == alone.also
    assert more.introduces != alone.introduces and more.name != alone.name


def test_label_file_errors_name_the_line() -> None:
    good = '{"id": "1", "week": "2025-W12", "introduces": false, "area": "other"}'
    assert parse_labels(good)[0] == Label(
        "1", False, "", (), "", "other", (), "", week="2025-W12", lead_should_see=False
    )
    with pytest.raises(ContributionsError, match="line 2"):
        parse_labels(good + "\n{not json")


# -- evaluation ---------------------------------------------------------------------------------------------
def test_grouped_cv_never_scores_a_paper_with_a_model_that_saw_its_week() -> None:
    papers = load_labeled()
    seen: list[set[str]] = []

    def fit(train_papers):  # type: ignore[no-untyped-def]
        seen.append({p.label.doc_id for p in train_papers})
        assert len({p.label.week for p in train_papers}) == 2
        return shipped_model()

    preds = evaluate.grouped_cv(papers, fit)
    assert len(seen) == 3 and [p.doc_id for p in preds] == [p.label.doc_id for p in papers]
    for week, train_ids in zip(sorted({p.label.week for p in papers}), seen, strict=True):
        held = {p.label.doc_id for p in papers if p.label.week == week}
        assert held and not held & train_ids and len(held) + len(train_ids) == len(papers)


def test_scores_count_what_the_list_shows() -> None:
    def lab(i: str, intro: bool, name: str, kind: str, lead: bool) -> Label:
        return Label(i, intro, name, (), kind, "rl-post-training", (), "", week="2025-W12", lead_should_see=lead)

    def pred(i: str, intro: bool, name: str, kind: str) -> evaluate.Predicted:
        return evaluate.Predicted(i, intro, name, (), kind, "rl-post-training", (), "")

    labels = [
        lab("a", True, "QAE", "method", True),
        lab("b", True, "VCRL", "method", True),
        lab("c", False, "", "", False),
        lab("d", True, "Bench", "benchmark", False),
    ]
    preds = [pred("a", True, "QAE", "method"), pred("b", True, "VC", "method"), pred("c", True, "X", "method")]
    preds.append(pred("d", False, "", ""))
    s = evaluate.scores(labels, preds)
    assert s.lead_targets == 2 and s.lead_recall == 0.5 and s.lead_recall_any_name == 1.0
    assert s.cards == 3 and s.card_precision == round(1 / 3, 3)
    assert s.introduces_precision == round(2 / 3, 3) and s.introduces_recall == round(2 / 3, 3)
    assert s.card_kind_agreement == 1.0 and s.name_exact == round(1 / 3, 3)


# -- the contributions table ----------------------------------------------------------------------------------
def test_contributions_are_computed_once_per_text_and_model(workspace: Workspace) -> None:
    docs = list(snapshot_docs(set(KNOWN)).values())
    post = Document(id="post:1", kind="post", source="blog", title="Introducing ZetaPO", abstract="...",
                    published="2025-09-25T00:00:00Z")  # fmt: skip
    with workspace.store() as store:
        Documents(store).upsert([*docs, post])
        first = update_contributions(store)
        assert first.decided == len(docs) and first.introducing == len(docs)  # posts get no contribution
        rows = Contributions(store).contributions(KNOWN)
        assert {i: r.name for i, r in rows.items()} == KNOWN
        assert all(r.model == shipped_model().version and r.content_hash for r in rows.values())
        assert update_contributions(store).decided == 0  # nothing new: nothing decided
        changed = dataclasses.replace(docs[0], abstract=docs[0].abstract + " We also release code.", version=2)
        Documents(store).upsert([changed])
        assert update_contributions(store).decided == 1  # its text changed
        other = msgspec.structs.replace(shipped_model(), threshold=0.99)
        assert other.version != shipped_model().version
        assert update_contributions(store, other).decided == len(docs)  # a new model decides everything again
        # mentions: by spelling key, with comparisons
        dapo = Contributions(store).mentions_of(["dapo"])["dapo"]
        assert "2503.14476" in {m.doc_id for m in dapo}
        removed = Documents(store).delete(["2503.14476"])
        assert removed and not Contributions(store).contributions(["2503.14476"])
        assert "2503.14476" not in {m.doc_id for m in Contributions(store).mentions_of(["dapo"]).get("dapo", [])}


def test_schema_has_the_contributions_tables(tmp_path: Path) -> None:
    with Store(tmp_path / "x.db") as store:
        tables = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"contributions", "document_mentions"} <= tables


def test_worker_processes_store_what_one_process_does(tmp_path: Path) -> None:
    docs = list(snapshot_docs(set(KNOWN)).values())
    got = []
    for workers in (1, 2):
        with Store(tmp_path / f"w{workers}.db") as store:
            Documents(store).upsert(docs)
            assert update_contributions(store, workers=workers, batch=2).decided == len(docs)
            got.append(
                (
                    {
                        i: dataclasses.replace(r, published="")
                        for i, r in Contributions(store).contributions(KNOWN).items()
                    },
                    Contributions(store).mentions_of(["dapo", "grpo", "qae"]),
                )
            )
    assert got[0] == got[1]


def test_a_page_left_as_main_breaks_spawned_workers_until_main_is_put_back(tmp_path: Path) -> None:
    """What tests/conftest.py's ``main_module_restored`` guards against: with a script left as ``__main__`` (as
    Streamlit's AppTest leaves its page), spawned workers re-run it and deciding fails; with ``__main__`` put
    back (``main_module_kept``), the same workers decide."""
    import sys
    import types
    from concurrent.futures.process import BrokenProcessPool

    from tests.conftest import main_module_kept

    page = tmp_path / "page.py"
    page.write_text("raise SystemExit('the page ran in a worker')\n")
    docs = [
        Document(
            id=f"2501.{i:05d}",
            kind="paper",
            source="t",
            title=f"Method{i}: a method",
            abstract=f"We propose Method{i}, a method.",
            published="2025-01-06T00:00:00Z",
        )
        for i in range(4)
    ]
    ws, _ = Workspace.init(tmp_path / "ws")
    with ws.store() as store:
        Documents(store).upsert(docs)
        with main_module_kept():
            left = types.ModuleType("__main__")
            left.__file__ = str(page)
            sys.modules["__main__"] = left
            with pytest.raises(BrokenProcessPool):  # the children exit while re-running the page
                update_contributions(store, workers=2, batch=2)
        assert sys.modules["__main__"] is not left
        assert update_contributions(store, workers=2, batch=2).decided == len(docs)
