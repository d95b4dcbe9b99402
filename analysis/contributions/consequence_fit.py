"""Fitting the consequence model (``consequence.py``) on a workspace of the corpus, with a time split.

Examples come from the workspace's own cards, as a week listing builds them (``week.period_cards`` without the
ranking): each card's day-0 signals, its week and day, and its labels where one exists:

- ``lead``: the labeled introductions (``lead_should_see``; a graded ``priority`` of 3 weighs double) and the
  introductions the field later adopted (``adopted_dev``, positives);
- ``adopt``: the adopted introductions against every other card of the adopted list's year.

``fit(examples, before)`` reads only examples introduced before ``before``: the backtest fits on the past and
measures on what came after, and the shipped model is fitted on everything (``before`` the day after the last).
Scikit-learn is imported only here (``linear.fit``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources

import msgspec
import orjson

from radar.analysis.contributions.areas import card_area
from radar.analysis.contributions.cards import MethodCard, TagGroups, iso_week
from radar.analysis.contributions.consequence import ConsequenceModel
from radar.analysis.contributions.errors import ContributionsError
from radar.analysis.contributions.extract import title_handle
from radar.analysis.contributions.labels import LAB_AREAS
from radar.analysis.contributions.linear import Linear, fit
from radar.analysis.contributions.signals import signals
from radar.analysis.contributions.table import Contributions
from radar.analysis.contributions.week import _handle_card, named_cards, paper_of
from radar.analysis.label_lines import json_lines
from radar.crawler.documents import Documents
from radar.index.tags_table import Tags
from radar.store.table import Database

LEAD_C = 0.1  # inverse regularisation of the lead and must models (the backtest's levers: docs/benchmarks.md)
ADOPT_C = 0.1
MUST_WEIGHT = 1.0
ADOPT_WEIGHT = 0.6
EARLY_WEIGHT = 10.0
UNNAMED_PENALTY = 2.0


@dataclass(frozen=True, slots=True)
class Lead:
    """One labeled introduction (INTRODUCTIONS.md), read two ways:

    - ``lead``: would a lead want it flagged: ``lead_should_see`` where the labels give only that (introductions_dev),
      else also a named method, system, model or hardware design of the lab's areas that the graded labels put at
      priority 1 (a line is enough: an application, an incremental step) — the first file's reading;
    - ``must``: priority 2 or more (should see, must read); None where the labels do not grade it and it is a lead.

    ``source``: the label file ("dev", "dev2": the shared labels, whole weeks; "extra": the project's training-only
    labels, a few papers of many other weeks)."""

    doc_id: str
    week: str
    lead: bool
    must: bool | None
    priority: int | None
    source: str = "dev"


def _lead(r: LabelRow, source: str) -> Lead:
    flagged, priority = r.lead_should_see, r.priority
    if priority is None:
        return Lead(r.id, r.week, flagged, None if flagged else False, None, source)
    named = bool(r.introduces) and r.kind in ("method", "system", "model", "hardware")
    lead = flagged or (named and r.area in LAB_AREAS and priority >= 1)
    return Lead(r.id, r.week, lead, priority >= 2, priority, source)


class LabelRow(msgspec.Struct, frozen=True):
    """A line of a label file (INTRODUCTIONS.md), the fields read here (decoded with their types checked; the
    line's other fields are not read)."""

    id: str
    week: str
    lead_should_see: bool
    priority: int | None = None
    introduces: bool | None = None
    kind: str | None = None
    area: str | None = None


LEAD_FILES = {
    "dev": "introductions_dev.jsonl",
    "dev2": "introductions_dev2.jsonl",
    "extra": "introductions_extra.jsonl",
}


@dataclass(frozen=True, slots=True)
class Adopted:
    """One introduction the field later adopted (ADOPTED.md): its paper and the week it entered the corpus."""

    doc_id: str
    name: str
    week: str


@dataclass(slots=True)
class Example:
    doc_id: str
    name: str
    week: str
    day: str
    features: frozenset[str]
    card: MethodCard
    lead: bool | None = None  # None: not labeled
    must: bool | None = None  # priority 2 or more (None: not graded)
    weight: float = 1.0
    adopted: bool = False
    tags: tuple[str, ...] = field(default=())


def _label_file(name: str) -> bytes:
    return resources.files("radar.analysis.contributions").joinpath("labels", name).read_bytes()


def load_leads(sources: tuple[str, ...] = ("dev", "dev2", "extra")) -> list[Lead]:
    """The shipped lead labels (``LEAD_FILES``); an "extra" label never falls in a week of the shared labels
    (checked: the shared weeks are what the backtest measures)."""
    out = []
    for source in sources:
        out += _leads_of(LEAD_FILES[source], source)
    shared = {x.week for x in out if x.source != "extra"}
    mixed = sorted({x.week for x in out if x.source == "extra"} & shared)
    if mixed:
        raise ContributionsError(f"training-only labels fall in the shared labels' weeks {', '.join(mixed)}")
    return out


def _leads_of(name: str, source: str) -> list[Lead]:
    return json_lines(
        _label_file(name),
        lambda line: _lead(msgspec.json.decode(line, type=LabelRow), source),
        lambda n: ContributionsError(f"{name} line {n} is not a labeled introduction; fix that line"),
    )


def load_adopted() -> list[Adopted]:
    """The shipped ``adopted_dev.jsonl``: introductions of 2024 that frameworks later took in."""
    return json_lines(
        _label_file("adopted_dev.jsonl"),
        _adopted,
        lambda n: ContributionsError(f"adopted_dev.jsonl line {n} is not an adopted introduction; fix that line"),
    )


def _adopted(line: bytes) -> Adopted:
    r = orjson.loads(line)
    return Adopted(str(r["arxiv_id"]), str(r["name"]), str(r["corpus_week"]))


def examples(
    store: Database,
    since: str,
    until: str,
    *,
    groups: TagGroups | None = None,
    leads: Sequence[Lead] = (),
    adopted: Sequence[Adopted] = (),
    words: bool = True,
) -> list[Example]:
    """Every card of the papers entered in [since, until] (the listing's cards, beside-model methods included),
    plus each labeled paper that introduces no name as its title's handle card, with their labels."""
    cards = named_cards(store, since, until, {}, groups)
    with_card = {c.introduced_by for c in cards}
    lead_of = {x.doc_id: x for x in leads}
    adopted_ids = {a.doc_id for a in adopted}
    # a labeled paper that names nothing is a training example as its title's handle card (the listing shows such
    # a card only for the few papers the lead model rates highest: ``week.MAX_UNNAMED``)
    wanted = (set(lead_of) | adopted_ids) - with_card
    if wanted:
        unnamed = [r for r in Contributions(store).contributions(wanted).values() if since <= r.published <= until]
        docs = Documents(store).of([r.doc_id for r in unnamed])
        utags = Tags(store).of([r.doc_id for r in unnamed])
        for r in unnamed:
            doc = docs.get(r.doc_id)
            if doc is not None and title_handle(doc.title):
                area = card_area(r.area, utags.get(r.doc_id, []), groups, doc.title, doc.abstract)
                cards.append(_handle_card(r, title_handle(doc.title), area, doc))
    ids = [c.introduced_by for c in cards if c.introduced_by]
    docs = Documents(store).of(ids)
    tags = Tags(store).of(ids)
    out = []
    for c in cards:
        doc_id = c.introduced_by or ""
        t = tuple(tags.get(doc_id, []))
        ex = Example(
            doc_id,
            c.name,
            c.week or iso_week(c.introduced_on),
            c.introduced_on,
            frozenset(signals(paper_of(c, docs.get(doc_id), t), words=words)),
            c,
            tags=t,
        )
        if doc_id in lead_of:
            lab = lead_of[doc_id]
            ex.lead, ex.must = lab.lead, lab.must
            ex.weight = 2.0 if lab.priority == 3 else 1.0
        if doc_id in adopted_ids:
            ex.adopted = ex.lead = ex.must = True
            ex.weight = 2.0
        out.append(ex)
    return out


def _weighted(rows: Iterable[tuple[frozenset[str], str, float]]) -> tuple[list[frozenset[str]], list[str]]:
    """Rows repeated by their (integer) weight: ``linear.fit`` takes no sample weights."""
    xs: list[frozenset[str]] = []
    ys: list[str] = []
    for x, y, w in rows:
        for _ in range(max(1, round(w))):
            xs.append(x)
            ys.append(y)
    return xs, ys


def fit_lead(train: Sequence[Example], c: float = LEAD_C) -> Linear:
    """P(a lead wants it flagged): every labeled example."""
    xs, ys = _weighted((e.features, "yes" if e.lead else "no", 1.0) for e in train if e.lead is not None)
    return fit(xs, ys, c=c, class_weight="balanced")


def fit_must(train: Sequence[Example], c: float = LEAD_C) -> Linear:
    """P(should see or must read it: priority 2+): the graded examples (a priority 3 counts twice)."""
    xs, ys = _weighted((e.features, "yes" if e.must else "no", e.weight) for e in train if e.must is not None)
    return fit(xs, ys, c=c, class_weight="balanced")


def fit_adopt(train: Sequence[Example], adopted_weeks: Iterable[str], c: float = ADOPT_C) -> Linear:
    """Adopted introductions against every other card of the weeks from the first adopted one's year on."""
    first = min(adopted_weeks, default="")
    rows = [(e.features, "yes" if e.adopted else "no", 1.0) for e in train if first and e.week[:4] == first[:4]]
    if not rows:
        return Linear(("no", "yes"), {}, (0.0,))
    xs, ys = _weighted(rows)
    return fit(xs, ys, c=c, class_weight="balanced")


PRUNE = 0.002  # weights smaller than this are dropped from the stored model (they move no card's rank)


def pruned(model: Linear) -> Linear:
    return Linear(model.classes, {f: w for f, w in model.weights.items() if abs(w[0]) >= PRUNE}, model.bias)


def fit_model(
    examples: Sequence[Example],
    before: str,
    *,
    lead_c: float = LEAD_C,
    adopt_c: float = ADOPT_C,
    must_weight: float = MUST_WEIGHT,
    adopt_weight: float = ADOPT_WEIGHT,
    early_weight: float = EARLY_WEIGHT,
    unnamed_penalty: float = UNNAMED_PENALTY,
) -> ConsequenceModel:
    """The model fitted on the examples introduced before ``before`` (YYYY-MM-DD) only."""
    train = [e for e in examples if e.day and e.day < before]
    adopted_weeks = [e.week for e in train if e.adopted]
    flat = Linear(("no", "yes"), {}, (0.0,))
    lead = pruned(fit_lead(train, lead_c))
    must = pruned(fit_must(train, lead_c)) if any(e.must is not None for e in train) else flat
    adopt = pruned(fit_adopt(train, adopted_weeks, adopt_c)) if adopted_weeks else flat
    return ConsequenceModel(lead, must, adopt, must_weight, adopt_weight, early_weight, before, unnamed_penalty)


def logit_scores(model: ConsequenceModel, exs: Sequence[Example]) -> Mapping[int, float]:
    """The day-0 logit of each example (by position)."""
    return {i: model.day0_logit(e.features) for i, e in enumerate(exs)}


def positions(order: Sequence[Example], wanted: Iterable[str]) -> list[int]:
    """0-based positions in ``order`` of the first card of each wanted paper (absent ones left out)."""
    first: dict[str, int] = {}
    for i, e in enumerate(order):
        first.setdefault(e.doc_id, i)
    return [first[d] for d in wanted if d in first]


def ndcg(gains: Sequence[float], k: int | None = None) -> float:
    """nDCG of a list's gains in list order (k: cut-off)."""
    top = list(gains[:k] if k else gains)
    ideal = sorted(gains, reverse=True)[: len(top)]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(top))
    best = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / best if best else 0.0
