"""The consequence ranking of a week's cards: the stored model, its signals and evidence, the listing built on it
(one order, beside-model methods, findings with no name, no recency inside a week), areas, senses and text."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import date
from pathlib import Path

import orjson
import pytest

from radar.analysis.contributions.areas import card_area
from radar.analysis.contributions.card import CardJson
from radar.analysis.contributions.cards import MethodCard, card_for, parse_week
from radar.analysis.contributions.consequence import (
    ConsequenceModel,
    early_uses,
    in_words,
    shipped_consequence,
)
from radar.analysis.contributions.consequence_fit import Example, fit_model, load_adopted, load_leads
from radar.analysis.contributions.errors import ContributionsError
from radar.analysis.contributions.extract import plain_text, title_handle
from radar.analysis.contributions.linear import Linear, encode
from radar.analysis.contributions.senses import Intro, senses_of
from radar.analysis.contributions.signals import Paper, signals, stack_of
from radar.analysis.contributions.table import MentionRow
from radar.analysis.contributions.update import update_contributions
from radar.analysis.contributions.week import MAX_UNNAMED, paper_of, rank, week_cards
from radar.app.wiring import repro_presets
from radar.crawler.documents import Documents
from radar.reports.text import plain
from radar.store import Store
from tests.snapshot_data import snapshot_documents

W39 = "2025-W39"
RL_GROUPS = {"rl-policy-optimization": "rl-post-training", "inference-serving": "hardware-systems"}


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The snapshot's papers of 2025-W39 and the four weeks after it, decided by the shipped model."""
    start, end = parse_week(W39)
    last = date.fromordinal(end.toordinal() + 28)
    docs = snapshot_documents(lambda r: start <= date.fromisoformat(r["published"][:10]) <= last, authors=True)
    path = tmp_path_factory.mktemp("consequence") / "radar.db"
    with Store(path) as store:
        Documents(store).upsert(docs)
        update_contributions(store)
    return path


# -- the stored model -------------------------------------------------------------------------------------
def test_the_shipped_model_reads_back_with_its_version_and_fits_before_a_day() -> None:
    model = shipped_consequence()
    again = ConsequenceModel.decode(encode(model))
    assert again.version == model.version and model.version.startswith("q")
    assert encode(again) == encode(model)
    assert model.fitted_before  # the time split it was fitted under travels with it


def test_a_damaged_or_foreign_model_file_is_one_line_naming_the_fix() -> None:
    for data in (b"{not json", orjson.dumps({"code_version": "0"}), orjson.dumps({"code_version": "1"})):
        with pytest.raises(ContributionsError, match="retrain --consequence"):
            ConsequenceModel.decode(data)


def _example(doc_id: str, day: str, features: set[str], lead: bool | None, adopted: bool = False) -> Example:
    card = MethodCard(
        name=doc_id, kind="method", area="rl-post-training", status="introduced", introduced_by=doc_id, title="",
        introduced_on=day, week="", code=(), changes="", builds_on=(), also=(), used_by=(), compared_by=(),
        first_seen=day, first_id=doc_id, preset="", preset_title="", score=1.0,
    )  # fmt: skip
    week = f"{date.fromisoformat(day).isocalendar()[0]}-W{date.fromisoformat(day).isocalendar()[1]:02d}"
    return Example(doc_id, doc_id, week, day, frozenset(features), card, lead=lead, must=lead, adopted=adopted)


def test_fitting_reads_only_what_came_before_the_split_and_is_deterministic() -> None:
    """A model fitted before a day is the same whatever came after it (the time split), and the same twice."""
    past = [_example(f"p{i}", f"2025-01-0{1 + i % 9}", {"stack:grpo"} if i % 2 else {"domain:2"}, bool(i % 2))
            for i in range(40)]  # fmt: skip
    future = [_example(f"f{i}", "2025-06-01", {"domain:2"}, True, adopted=True) for i in range(40)]
    a = fit_model(past, "2025-02-01")
    b = fit_model(past + future, "2025-02-01")
    assert a.version == b.version and encode(a) == encode(fit_model(past, "2025-02-01"))
    assert a.lead.probability({"stack:grpo"}) > 0.5 > a.lead.probability({"domain:2"})
    c = fit_model(past + future, "2025-07-01")  # the future, once it is the past, is read
    assert c.version != a.version


# -- signals and evidence -----------------------------------------------------------------------------------
def _paper(title: str, abstract: str, **kw: object) -> Paper:
    base = Paper(
        name="X", kind="method", area="rl-post-training", score=0.9, named=True, title=title, abstract=abstract,
        code=(), builds_on=(), categories=("cs.LG",), authors=(), tags=(),
    )  # fmt: skip
    return replace(base, **kw)  # type: ignore[arg-type]


def test_signals_read_the_stack_the_scale_and_the_gain_as_whole_words() -> None:
    f = signals(_paper("X: a drop-in GRPO change", r"We cut the KV cache and reach a 3.1$\times$ speedup on 70B."))
    assert {"stack:grpo", "stack:kv cache", "general", "gain:2", "size:3"} <= f
    # an acronym inside a word is no mention of it: "prm" in "promote", "ppo" in "opposed"
    assert stack_of("we promote opposed views") == []
    assert stack_of("a process reward model (prm) for ppo") == ["ppo", "reward model"]


def _lead_only(weights: dict[str, float], early_weight: float, unnamed_penalty: float = 0.0) -> ConsequenceModel:
    """A consequence model whose lead part has ``weights`` (the must and adopt parts flat)."""
    flat = Linear(("no", "yes"), {}, (0.0,))
    lead = Linear(("no", "yes"), {k: (v,) for k, v in weights.items()}, (0.0,))
    return ConsequenceModel(lead, flat, flat, 1.0, 0.5, early_weight, "2025-01-01", unnamed_penalty)


def test_evidence_is_what_the_paper_does_before_its_area_and_in_words() -> None:
    w = {"stack:grpo": 1.0, "area:rl-post-training": 3.0, "code": 0.5, "w:quantile": 2.0, "domain:2": -1.0}
    model = _lead_only(w, early_weight=0.7)
    score = model.score(set(w), early_uses=0)
    assert score.evidence == ("builds on GRPO".replace("builds on", "about"), "code released")
    assert all(in_words(f) for f in ("stack:kv cache", "size:3", "gain:2", "org_author"))
    weeks_old = model.score(set(w), early_uses=3)
    assert weeks_old.score > score.score and weeks_old.evidence[0].startswith("3 papers named it")
    assert weeks_old.day0 == score.day0 and weeks_old.day0_evidence == score.evidence  # a call's day-0 reasons


def test_uptake_raises_only_the_labs_cards_and_a_finding_with_no_name_starts_lower() -> None:
    """The early term counts in the lab's areas only (a popular vision model does not rise in the lab's list), and
    a card with no name pays the unnamed penalty on its day-0 logit, exactly."""
    w = {"area:rl-post-training": 1.0, "area:other": 1.0, "w:quantile": 0.5}
    model = _lead_only(w, early_weight=10.0, unnamed_penalty=2.0)
    lab, other = {"area:rl-post-training", "w:quantile"}, {"area:other", "w:quantile"}
    assert model.day0_logit(lab) == pytest.approx(model.day0_logit(other))
    assert model.logit(lab, 3) == pytest.approx(model.day0_logit(lab) + 10.0 * math.log1p(3))
    assert model.logit(other, 3) == model.day0_logit(other)  # uptake outside the lab's areas moves nothing
    assert model.score(other, 3).score == model.score(other, 0).score
    assert not model.score(other, 3).evidence[0].startswith("3 papers")
    assert model.day0_logit(lab | {"unnamed"}) == pytest.approx(model.day0_logit(lab) - 2.0)
    again = ConsequenceModel.decode(encode(model))  # the penalty is stored with the model
    assert again.unnamed_penalty == 2.0 and again.logit(lab | {"unnamed"}, 3) == pytest.approx(
        model.logit(lab | {"unnamed"}, 3)
    )


def test_early_uses_count_the_first_four_weeks_only() -> None:
    assert early_uses(["2025-09-25", "2025-10-20", "2025-10-30", "bad"], "2025-09-24") == 2


# -- the week's listing ----------------------------------------------------------------------------------
def test_a_week_is_listed_by_consequence_and_a_weekend_paper_does_not_rise(store_path: Path) -> None:
    with Store(store_path) as store:
        cards = week_cards(store, W39, repro_presets(), RL_GROUPS)
        scores = [c.consequence.score for c in cards]
        assert scores == sorted(scores, reverse=True) and all(c.consequence.version for c in cards)
        # the same card dated Monday or Sunday of the week scores the same: no recency inside a closed week
        card = cards[0]
        monday, sunday = (replace(card, introduced_on=d) for d in ("2025-09-22", "2025-09-28"))
        again = rank(store, [monday, sunday])
        assert again[0].consequence.score == again[1].consequence.score


def test_the_w39_grpo_family_methods_lead_and_the_far_papers_do_not(store_path: Path) -> None:
    """The demo week as a lead reads it: the week's GRPO-family methods among the first cards, a storage ASIC,
    a programming language's evaluation, a precision-medicine system and an optical spiking network far below."""
    with Store(store_path) as store:
        names = [c.name for c in week_cards(store, W39, repro_presets(), RL_GROUPS)]
    wanted = [names.index(n) for n in ("QAE", "PSPO", "RL-ZVP", "VCRL", "NGRPO", "Tree-GRPO")]
    far = [names.index(n) for n in ("CDPU", "Mojo", "GALAX", "Otters")]
    assert max(wanted) < min(far), (names[: max(wanted) + 1], far)  # every one of the six before any of the four
    assert max(wanted) < 25, names[:25]  # and all six among the first 25 (the 10 is not reached)
    assert min(far) >= 20, names[:20]
    # half of the six among the first 10 (the target, all six, is not reached: docs/benchmarks.md)
    assert sum(i < 10 for i in wanted) >= 3, names[:10]


def test_a_method_beside_a_model_gets_a_card_and_an_unnamed_finding_a_handle(store_path: Path) -> None:
    with Store(store_path) as store:
        cards = week_cards(store, W39, repro_presets(), RL_GROUPS)
    unnamed = [c for c in cards if not c.named]
    assert len(unnamed) <= MAX_UNNAMED
    for c in unnamed:
        assert c.name == title_handle(c.title) and CardJson.of(c).named is False
    hosts = {c.introduced_by for c in cards if c.kind in ("model", "system") and c.also}
    beside = [c for c in cards if c.introduced_by in hosts and c.kind == "method"]
    for c in beside:  # its own card: the name the paper introduces beside its model, that paper's clause
        assert c.name in next(h.also for h in cards if h.introduced_by == c.introduced_by and h.name != c.name)


def test_title_handles_are_short_and_the_papers_own_words() -> None:
    assert title_handle("Tricks or Traps? A Deep Dive into RL for LLM Reasoning") == "Tricks or Traps"
    assert title_handle("Binary Classifier Optimization for Large Language Model Alignment") == (
        "Binary Classifier Optimization"
    )
    assert title_handle("The Era of 1-bit LLMs: All Large Language Models are in 1.58 Bits") == "The Era of 1-bit LLMs"
    assert len(title_handle("A " + "very " * 20 + "long title").split()) <= 6


# -- areas, senses, text ------------------------------------------------------------------------------------
def test_areas_follow_the_labs_taxonomy() -> None:
    tabular = ("LLM-FE: Automated Feature Engineering for Tabular Data with LLMs as Evolutionary Optimizers",
               "We use LLMs as evolutionary optimizers to discover features for tabular prediction.")  # fmt: skip
    assert card_area("rl-post-training", [], None, *tabular) == "other-llm"
    assert card_area("rl-post-training", ["rl-policy-optimization"], RL_GROUPS, *tabular) == "other-llm"
    kv = ("KVX: cheaper decoding", "We compress the KV cache of LLMs, cutting memory by 4x at equal accuracy.")
    assert card_area("other-llm", [], None, *kv) == "hardware-systems"
    grpo = ("Y", "We improve GRPO training of language models with a new advantage.")
    assert card_area("rl-post-training", [], None, *grpo) == "rl-post-training"
    assert card_area("other", [], None, "Z", "A new image classifier with 2x lower latency.") == "other"
    # RL with no language model in its text is classical RL (the taxonomy: not robots, games or control): other
    control = ("One Step is Enough", "A multi-agent reinforcement learning method with one-step policy optimization.")
    assert card_area("rl-post-training", ["rl-policy-optimization"], RL_GROUPS, *control) == "other"
    rag = ("ProRAG", "Process-supervised reinforcement learning for retrieval-augmented generation.")
    assert card_area("rl-post-training", [], None, *rag) == "rl-post-training"
    grpo_only = ("Calibrating Advantage", "A GRPO variant with calibrated advantages, evaluated on AIME and MATH500.")
    assert card_area("rl-post-training", ["rl-policy-optimization"], RL_GROUPS, *grpo_only) == "rl-post-training"


def _m(doc: str, day: str, area: str = "rl-post-training", expansion: str = "") -> MentionRow:
    return MentionRow(doc, day, False, expansion, area)


def test_a_name_several_papers_introduce_afresh_is_as_many_senses() -> None:
    mentions = [_m("a", "2025-03-01", "other-llm"), _m("b", "2025-05-01", "hardware-systems"),
                _m("c", "2025-06-01", "hardware-systems"), _m("d", "2025-09-01"), _m("e", "2025-10-01")]  # fmt: skip
    intros = [Intro("a", "2025-03-01", "other-llm"), Intro("b", "2025-05-01", "hardware-systems"),
              Intro("d", "2025-09-01", "rl-post-training")]  # fmt: skip
    senses = senses_of(mentions, intros)
    groups = sorted(sorted(s.ids) for s in senses)
    assert groups == [["a"], ["b", "c"], ["d", "e"]]
    assert len(senses_of(mentions)) == 1  # without its introductions: one sense, as before


def test_a_long_form_a_handful_of_papers_give_does_not_name_the_rest() -> None:
    mentions = [_m(f"p{i}", "2025-01-01", "hardware-systems") for i in range(60)]
    mentions.append(_m("odd", "2025-02-01", "other", "vision Large Language Model"))
    senses = senses_of(mentions)
    main = max(senses, key=lambda s: len(s.mentions))
    assert main.expansion == "" and len(main.mentions) == 60


def test_times_and_escaped_quotes_read_as_a_systems_reader_needs() -> None:
    for text in (r"a 1.3$\times$ speedup", r"1.3\times speedup"):
        assert plain(text).startswith(("a 1.3x speedup", "1.3x speedup"))
        assert "1.3x" in plain_text(text)
    assert plain(r"a \"quoted\" word") == 'a "quoted" word'
    assert plain(r"Schr\"odinger") == "Schrödinger"


def test_the_labels_read_two_ways_and_stay_apart() -> None:
    leads = load_leads()
    shared = {x.week for x in leads if x.source != "extra"}
    assert not {x.week for x in leads if x.source == "extra"} & shared  # training-only weeks, by construction
    graded = [x for x in leads if x.priority is not None]
    assert all(x.must == (x.priority >= 2) for x in graded if x.priority is not None)
    assert all(x.lead for x in graded if x.must)  # a must-read is a lead
    assert len(load_adopted()) == 43


def test_paper_of_reads_the_cards_paper(store_path: Path) -> None:
    with Store(store_path) as store:
        card = card_for(store, "QAE", repro_presets())
        doc = Documents(store).get(card.introduced_by or "")
    p = paper_of(card, doc, ["rl-policy-optimization"])
    assert p.abstract and p.tags == ("rl-policy-optimization",) and p.name == "QAE"


def test_a_new_card_is_evaluated_from_its_day0_consequence_at_the_threshold() -> None:
    """The `consequential` rule: a new card in the profile's areas at or above EVALUATE_AT is "evaluate", with its
    score and evidence as the reason; just below, it is watched as new."""
    from radar.reports.recommend import EVALUATE_AT, Evidence, decide

    def rec(score: float):  # type: ignore[no-untyped-def]
        ev = Evidence(method="QAE", origin="new this period", new=True, focus=True, kind="method",
                      area="rl-post-training", count=1, recent_count=1, consequence=score,
                      consequence_why="about GRPO; code released", introduced_by={"id": "2509.22611"})  # fmt: skip
        return decide(ev)

    above, below = rec(EVALUATE_AT), rec(EVALUATE_AT - 0.01)
    assert (above.action, above.rule) == ("evaluate", "consequential")
    assert f"consequence {EVALUATE_AT:.2f}: about GRPO; code released" in above.reason
    assert (below.action, below.rule) == ("watch", "new")
