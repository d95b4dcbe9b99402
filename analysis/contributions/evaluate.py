"""How well contributions match the labels: leave-one-week-out cross-validation beside the rule baseline.

Each labeled week is held out in turn; the model is fitted on the other weeks (``model.train``) and decides
the held-out week's papers, so no paper is scored by a model that saw it or any paper of its week (checked:
``grouped_cv`` asserts the held-out ids are disjoint from the training ids). Figures per field and the
list-level figures of a week listing (``radar methods --week``):

- introduces precision/recall; name exact match (of the papers that introduce something, the share
  listed with exactly the labeled name); kind and area agreement;
- lead recall: of the introductions a lead should see (a method or system in the lab's two areas that the
  annotators flagged), the share listed with the labeled name (and listed at all);
- card precision: of the listed papers, the share that really introduce something under the labeled name;
- card kind agreement: of the listed papers that introduce something, the share whose kind agrees;
- also precision/recall: the other names a paper introduces (of the papers listed with the labeled name).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from radar.analysis.contributions.errors import ContributionsError
from radar.analysis.contributions.find import changes_line, contribution_of
from radar.analysis.contributions.labels import LEAD_KINDS, Introduction, Label, LabeledPaper, Training, disjoint
from radar.analysis.contributions.model import ContributionModel, fit_shipped, train
from radar.analysis.contributions.rules import rule_decision


@dataclass(frozen=True, slots=True)
class Predicted(Introduction):
    score: float = 1.0  # the probability that it introduces ``name`` (1 for the rules)


def model_predictions(model: ContributionModel, papers: Sequence[LabeledPaper]) -> list[Predicted]:
    out = []
    for p in papers:
        c = contribution_of(p, model)
        out.append(Predicted(c.doc_id, c.introduces, c.name, c.also, c.kind, c.area, c.builds_on, c.changes, c.score))
    return out


def rule_predictions(papers: Sequence[LabeledPaper]) -> list[Predicted]:
    out = []
    for p in papers:
        name, kind, area, builds = rule_decision(p.title, p.abstract)
        changes = changes_line(p.title, p.abstract, name) if name else ""
        out.append(Predicted(p.label.doc_id, bool(name), name, (), kind, area, builds, changes))
    return out


def grouped_cv(
    papers: Sequence[LabeledPaper],
    fit: Callable[[Sequence[LabeledPaper]], ContributionModel] = train,
) -> list[Predicted]:
    """Leave-one-week-out predictions for every paper (in the papers' order)."""
    weeks = sorted({p.label.week for p in papers})
    if len(weeks) < 2:
        raise ContributionsError("grouped cross-validation needs labeled papers of at least two weeks")
    by_id: dict[str, Predicted] = {}
    for week in weeks:
        held = [p for p in papers if p.label.week == week]
        rest = [p for p in papers if p.label.week != week]
        assert not {p.label.doc_id for p in held} & {p.label.doc_id for p in rest}, "a paper is in both folds"
        model = fit(rest)
        for pred in model_predictions(model, held):
            by_id[pred.doc_id] = pred
    return [by_id[p.label.doc_id] for p in papers]


def lead_target(lab: Label) -> bool:
    """An introduction a lead should see: flagged, and a method or system (the lab's areas by construction)."""
    return lab.introduces and lab.lead_should_see and lab.kind in LEAD_KINDS


@dataclass(frozen=True, slots=True)
class Scores:
    """Per-field and list-level figures of one set of predictions (``scores``); None: nothing to divide by."""

    papers: int
    introduces_precision: float | None
    introduces_recall: float | None
    name_exact: float | None
    name_exact_when_both_introduce: float | None
    kind_agreement: float | None
    area_agreement: float | None
    builds_on_precision: float | None
    builds_on_recall: float | None
    also_precision: float | None
    also_recall: float | None
    changes_token_f1: float | None
    lead_targets: int
    lead_recall: float | None
    lead_recall_any_name: float | None
    cards: int
    card_precision: float | None
    card_kind_agreement: float | None


@dataclass(frozen=True, slots=True)
class Compared:
    """The model's figures beside the rule baseline's."""

    model: Scores
    rules: Scores


@dataclass(frozen=True, slots=True)
class Report(Compared):
    """``report``: overall and per held-out week (as JSON: ``msgspec.to_builtins``)."""

    weeks: dict[str, Compared]


def _ratio(n: int, d: int) -> float | None:
    return round(n / d, 3) if d else None


def _tokens(text: str) -> set[str]:
    return {w for w in text.lower().replace(",", " ").split() if len(w) > 2}


def scores(labels: Sequence[Label], preds: Sequence[Predicted]) -> Scores:
    """Per-field and list-level figures of ``preds`` against ``labels`` (same order)."""
    pairs = list(zip(labels, preds, strict=True))
    tp = sum(lab.introduces and p.introduces for lab, p in pairs)
    pred_pos = sum(p.introduces for _, p in pairs)
    pos = sum(lab.introduces for lab, _ in pairs)
    named = [(lab, p) for lab, p in pairs if lab.introduces and p.introduces and p.name == lab.name]
    both = [(lab, p) for lab, p in pairs if lab.introduces and p.introduces]
    lead = [(lab, p) for lab, p in pairs if lead_target(lab)]
    b_tp = sum(len(set(p.builds_on) & set(lab.builds_on)) for lab, p in pairs)
    b_pred = sum(len(set(p.builds_on)) for _, p in pairs)
    b_gold = sum(len(set(lab.builds_on)) for lab, _ in pairs)
    changes_f1 = []
    for lab, p in named:
        g, s = _tokens(lab.changes), _tokens(p.changes)
        if g and s:
            hit = len(g & s)
            changes_f1.append(0.0 if not hit else 2 * hit / (len(g) + len(s)))
    listed_intro = [(lab, p) for lab, p in pairs if p.introduces and lab.introduces]
    a_tp = sum(len(set(p.also) & set(lab.also)) for lab, p in named)
    a_pred = sum(len(set(p.also)) for _, p in named)
    a_gold = sum(len(set(lab.also)) for lab, _ in named)
    return Scores(
        papers=len(pairs),
        introduces_precision=_ratio(tp, pred_pos),
        introduces_recall=_ratio(tp, pos),
        name_exact=_ratio(len(named), pos),
        name_exact_when_both_introduce=_ratio(len(named), len(both)),
        kind_agreement=_ratio(sum(lab.kind == p.kind for lab, p in both), len(both)),
        area_agreement=_ratio(sum(lab.area == p.area for lab, p in pairs), len(pairs)),
        builds_on_precision=_ratio(b_tp, b_pred),
        builds_on_recall=_ratio(b_tp, b_gold),
        also_precision=_ratio(a_tp, a_pred),
        also_recall=_ratio(a_tp, a_gold),
        changes_token_f1=round(sum(changes_f1) / len(changes_f1), 3) if changes_f1 else None,
        lead_targets=len(lead),
        lead_recall=_ratio(sum(p.introduces and p.name == lab.name for lab, p in lead), len(lead)),
        lead_recall_any_name=_ratio(sum(p.introduces for _, p in lead), len(lead)),
        cards=pred_pos,
        card_precision=_ratio(sum(lab.introduces and p.name == lab.name for lab, p in pairs if p.introduces), pred_pos),
        card_kind_agreement=_ratio(sum(lab.kind == p.kind for lab, p in listed_intro), len(listed_intro)),
    )


def report(papers: Sequence[LabeledPaper], training: Training | None = None) -> Report:
    """Grouped-CV figures of the model beside the rule baseline, overall and per held-out week (``training``: the
    training-only labels each fold's model is also fitted on, as the shipped one is)."""
    labels = [p.label for p in papers]
    if training is not None:
        disjoint(papers, training)  # no held-out paper or week is among the training-only labels
    model_preds = grouped_cv(papers, train if training is None else lambda rest: fit_shipped(rest, training))
    rule_preds = rule_predictions(papers)
    weeks = {}
    for week in sorted({lab.week for lab in labels}):
        idx = [i for i, lab in enumerate(labels) if lab.week == week]
        weeks[week] = Compared(
            scores([labels[i] for i in idx], [model_preds[i] for i in idx]),
            scores([labels[i] for i in idx], [rule_preds[i] for i in idx]),
        )
    return Report(scores(labels, model_preds), scores(labels, rule_preds), weeks)
