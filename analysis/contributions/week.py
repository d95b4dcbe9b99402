"""A week's method cards in the lead's reading order: what `radar methods --week`, the report's "New this week"
and the dashboard's Methods page list, in one order (the report may cut the list by the profile, never reorder it).

The cards of a period are

- one per paper that introduces a name (``cards.cards_of``), and, beside it, one per method the paper introduces
  beside its model or system (CISPO in MiniMax-M1, GRPO in DeepSeekMath): the thing the field adopts is often
  that method, not the model;
- one per lab-area paper that names nothing but whose finding or recipe a lead should see (``named`` False; its
  handle comes from the title: "Tricks or Traps"), at most ``MAX_UNNAMED`` a week and only above
  ``UNNAMED_LEAD``;

ordered by their consequence score (``consequence.py``: day-0 signals, then early uptake once the card is weeks
old), highest first, then by name. There is no recency term: inside a closed week, a weekend paper does not rise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from radar.analysis.contributions.areas import card_area
from radar.analysis.contributions.cards import (
    MethodCard,
    Presets,
    TagGroups,
    as_main,
    cards_of,
    iso_week,
    parse_week,
)
from radar.analysis.contributions.consequence import ConsequenceModel, shipped_consequence
from radar.analysis.contributions.extract import title_handle
from radar.analysis.contributions.labels import LAB_AREAS, LEAD_KINDS
from radar.analysis.contributions.signals import Paper, signals
from radar.analysis.contributions.table import ContributionRow, Contributions
from radar.analysis.contributions.update import name_key
from radar.crawler.documents import Document, Documents
from radar.index.tags_table import Tags
from radar.store.table import Database

# an introduced name beside the paper's main one gets a card of its own when the main one is one of these kinds
# and it is a method (CISPO beside the model MiniMax-M1)
HOST_KINDS = ("model", "system", "benchmark", "hardware")
MAX_UNNAMED = 3  # cards a week for findings with no name
UNNAMED_LEAD = 0.5  # ... and only when the lead model gives at least this


def paper_of(card: MethodCard, doc: Document | None, tags: Sequence[str]) -> Paper:
    return Paper(
        name=card.name,
        kind=card.kind,
        area=card.area,
        score=card.score,
        named=card.named,
        title=doc.title if doc else card.title,
        abstract=doc.abstract if doc else "",
        code=card.code,
        builds_on=card.builds_on,
        categories=tuple(doc.categories) if doc else (),
        authors=tuple(doc.authors) if doc else (),
        tags=tuple(tags),
    )


def rank(store: Database, cards: Sequence[MethodCard], model: ConsequenceModel | None = None) -> list[MethodCard]:
    """``cards`` with their consequence scored, highest first (then by name); a card with no introducing paper
    (spreading, before the corpus) keeps no score and comes last."""
    model = model or shipped_consequence()
    ids = [c.introduced_by for c in cards if c.introduced_by]
    docs = Documents(store).of(ids)
    tags = Tags(store).of(ids)
    scored = []
    for c in cards:
        if c.introduced_by is None:
            scored.append(c)
            continue
        features = signals(paper_of(c, docs.get(c.introduced_by), tags.get(c.introduced_by, [])))
        scored.append(replace(c, consequence=model.score(features, c.early_uses)))
    return sorted(scored, key=lambda c: (-c.consequence.score, c.name.lower(), c.introduced_by or ""))


def _beside(store: Database, rows: Sequence[ContributionRow]) -> list[ContributionRow]:
    """The methods papers introduce beside a main name of a ``HOST_KINDS`` kind, each as a row of its own."""
    out = []
    for row in rows:
        if row.kind not in HOST_KINDS:
            continue
        for also in row.also:
            beside = as_main(store, row, also)
            if beside.kind == "method":
                out.append(beside)
    return out


def _unnamed_cards(
    store: Database,
    since: str,
    until: str,
    groups: TagGroups | None,
    model: ConsequenceModel,
    taken: set[str],
) -> list[MethodCard]:
    """Cards for the lab-area papers of the period that name nothing but that the lead model rates at least
    ``UNNAMED_LEAD``: the ``MAX_UNNAMED`` best."""
    between = Contributions(store).contributions_between(since, until, introducing=False)
    rows = [r for r in between if r.doc_id not in taken]
    if not rows:
        return []
    docs = Documents(store).of([r.doc_id for r in rows])
    tags = Tags(store).of([r.doc_id for r in rows])
    found = []
    for r in rows:
        doc = docs.get(r.doc_id)
        if doc is None:
            continue
        handle = title_handle(doc.title)
        if not handle:
            continue
        area = card_area(r.area, tags.get(r.doc_id, []), groups, doc.title, doc.abstract)
        if area not in LAB_AREAS:
            continue
        card = _handle_card(r, handle, area, doc)
        p = paper_of(card, doc, tags.get(r.doc_id, []))
        lead = model.lead.probability(signals(p))
        if lead >= UNNAMED_LEAD:
            found.append((lead, card))
    found.sort(key=lambda lc: (-lc[0], lc[1].name))
    return [c for _, c in found[:MAX_UNNAMED]]


def _handle_card(row: ContributionRow, handle: str, area: str, doc: Document) -> MethodCard:
    return MethodCard(
        name=handle,
        kind="method",
        area=area,
        status="introduced",
        introduced_by=row.doc_id,
        title=doc.title,
        introduced_on=row.published,
        week=iso_week(row.published),
        code=row.code,
        changes=row.changes_rewritten or row.changes,
        builds_on=row.builds_on,
        also=(),
        used_by=(),
        compared_by=(),
        first_seen=row.published,
        first_id=row.doc_id,
        preset="",
        preset_title="",
        score=1.0 - row.score,  # how sure the model is that it names nothing
        named=False,
    )


def named_cards(
    store: Database, since: str, until: str, presets: Presets, groups: TagGroups | None = None
) -> list[MethodCard]:
    """The new named cards of the papers entered in [since, until], unranked: one per introducing paper and one
    per method introduced beside a model or system (what the listing and the consequence model's fitting read)."""
    rows = Contributions(store).introductions(since, until)
    return [c for c in cards_of(store, rows + _beside(store, rows), presets, groups) if c.new]


def period_cards(
    store: Database,
    since: str,
    until: str,
    presets: Presets,
    groups: TagGroups | None = None,
    model: ConsequenceModel | None = None,
) -> list[MethodCard]:
    """The cards of the papers that entered the record in [since, until], in the lead's reading order."""
    model = model or shipped_consequence()
    cards = named_cards(store, since, until, presets, groups)
    taken = {c.introduced_by for c in cards if c.introduced_by}
    cards += _unnamed_cards(store, since, until, groups, model, taken)
    return rank(store, _dedup(cards), model)


def _dedup(cards: Sequence[MethodCard]) -> list[MethodCard]:
    seen: set[tuple[str | None, str]] = set()
    out = []
    for c in cards:
        key = (c.introduced_by, name_key(c.name))
        if key not in seen:
            seen.add(key)
            out.append(c)
    return out


def week_cards(
    store: Database,
    week: str,
    presets: Presets,
    groups: TagGroups | None = None,
    model: ConsequenceModel | None = None,
) -> list[MethodCard]:
    """The cards of ISO week ``week`` (YYYY-Www), in the lead's reading order."""
    start, end = parse_week(week)
    return period_cards(store, start.isoformat(), end.isoformat(), presets, groups, model)


def introduced_methods(
    store: Database,
    since: str,
    until: str,
    presets: Presets,
    *,
    kinds: Sequence[str] = LEAD_KINDS,
    areas: Sequence[str] = LAB_AREAS,
    groups: TagGroups | None = None,
    model: ConsequenceModel | None = None,
) -> list[MethodCard]:
    """The named methods/systems (``kinds``) that papers published in [since, until] introduce, in ``areas``
    (empty: any), in the lead's reading order: a period's *new* methods."""
    cards = period_cards(store, since, until, presets, groups, model)
    return [c for c in cards if c.named and c.kind in kinds and (not areas or c.area in areas)]


def by_paper(cards: Sequence[MethodCard]) -> Mapping[str, MethodCard]:
    """The first (highest) card of each introducing paper."""
    out: dict[str, MethodCard] = {}
    for c in cards:
        if c.introduced_by:
            out.setdefault(c.introduced_by, c)
    return out
