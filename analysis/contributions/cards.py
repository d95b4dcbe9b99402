"""Method cards: one per introduced or spreading name, from the stored contributions and mentions.

A card says what the name is (kind, area), which paper introduced it and that paper's own code links (links in
its own abstract only), what it changes and builds on, the later papers that name it or compare against it
(their ids; the counts are those lists' lengths, so they equal what the store holds), when it was first seen,
and which reproduction preset covers it (or that none does). Presets come from the caller (a name -> title
mapping): analysis does not read repro.

- ``week_cards``: the cards of one ISO week's papers, the lab's areas first (``radar methods --week``);
- ``card_for``: one name's card (``radar methods --name``), introduced or spreading;
- ``introduced_methods``: the methods and systems papers of a period introduce (what is *new* in a period:
  introduced by one of its papers, not first seen in several);
- ``all_cards``: every introduced name and every spreading name (the dashboard's list).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Any

from radar.analysis.contributions.errors import ContributionsError
from radar.analysis.contributions.extract import title_prefix
from radar.analysis.contributions.find import changes_line
from radar.analysis.contributions.labels import LAB_AREAS, LEAD_KINDS
from radar.analysis.contributions.update import name_key
from radar.store import Store
from radar.store.contributions import ContributionRow, MentionRow
from radar.store.names import NameRow

Presets = Mapping[str, str]  # preset name -> title (app/wiring.repro_presets)
TagGroups = Mapping[str, str]  # tag -> taxonomy group

_WEEK = re.compile(r"^(\d{4})-W(\d{2})$")
_FOLD = re.compile(r"[^a-z0-9]")
KIND_ORDER = ("method", "system", "model", "hardware", "benchmark", "other")
# spreading: a name no stored paper introduces, of a kind a lab adopts, named by at least this many papers
SPREADING_KINDS = ("method", "system", "model", "hardware")
MIN_SPREADING = 5
# a name at least this many stored papers named before a paper "introduces" it is not new there (the paper
# defines GRPO or GPT-4 for its readers), unless the paper's title starts with it (an acronym reused)
KNOWN_BEFORE = 20
# the taxonomy's tag for chip, accelerator and hardware-software co-design papers: a method such a paper
# introduces is its hardware design (in the labeled weeks, 5 of the 6 introductions of tagged papers)
HARDWARE_TAG = "accelerator-hardware"


@dataclass(frozen=True, slots=True)
class MethodCard:
    """What a lead reads about one name."""

    name: str
    kind: str
    area: str  # rl-post-training | hardware-systems | other-llm | other ('' when unknown)
    status: str  # "introduced" (a stored paper introduces it) or "spreading" (only named by stored papers)
    introduced_by: str | None  # the introducing paper's id
    title: str  # the introducing paper's title
    introduced_on: str  # YYYY-MM-DD
    week: str  # ISO week of the introduction ('' for a spreading name)
    code: tuple[str, ...]  # code links in the introducing paper's own abstract
    changes: str  # what it is or changes (the endpoint's line when rewritten, else the abstract's own)
    builds_on: tuple[str, ...]
    also: tuple[str, ...]  # other names the introducing paper introduces
    used_by: tuple[str, ...]  # later papers that name it, oldest first
    compared_by: tuple[str, ...]  # ... of which compare against it
    first_seen: str  # YYYY-MM-DD of the first stored paper naming it
    first_id: str
    preset: str  # the reproduction preset that covers it ('' when none does)
    preset_title: str
    score: float  # how sure the model is that the paper introduces it (1 for a spreading name)
    prior_mentions: int = 0  # stored papers that named it before the introducing paper

    @property
    def new(self) -> bool:
        """Introduced by its paper: not a name many stored papers used before (``KNOWN_BEFORE``), unless the
        paper's title starts with it."""
        return self.status == "introduced" and (
            self.prior_mentions < KNOWN_BEFORE or title_prefix(self.title) == self.name
        )

    @property
    def in_lab_areas(self) -> bool:
        return self.area in LAB_AREAS

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "area": self.area,
            "status": self.status,
            "introduced_by": self.introduced_by,
            "title": self.title,
            "introduced_on": self.introduced_on,
            "week": self.week,
            "changes": self.changes,
            "builds_on": list(self.builds_on),
            "also": list(self.also),
            "code": list(self.code),
            "uses": len(self.used_by),
            "compares": len(self.compared_by),
            "used_by": list(self.used_by),
            "compared_by": list(self.compared_by),
            "first_seen": self.first_seen,
            "first_id": self.first_id,
            "preset": self.preset or None,
            "preset_title": self.preset_title or None,
            "score": round(self.score, 3),
            "prior_mentions": self.prior_mentions,
        }


# -- periods and presets -----------------------------------------------------------------------------------
def parse_week(text: str) -> tuple[date, date]:
    """(Monday, Sunday) of an ISO week written YYYY-Www; one line naming the fix otherwise."""
    m = _WEEK.match(text.strip())
    try:
        if not m:
            raise ValueError
        start = date.fromisocalendar(int(m.group(1)), int(m.group(2)), 1)
    except ValueError:
        raise ContributionsError(f"--week {text!r} is not an ISO week; write it as YYYY-Www, e.g. 2025-W39") from None
    return start, start + timedelta(days=6)


def iso_week(day: str) -> str:
    try:
        y, w, _ = date.fromisoformat(day[:10]).isocalendar()
    except ValueError:
        return ""
    return f"{y}-W{w:02d}"


def _fold(text: str) -> str:
    return _FOLD.sub("", text.lower())


def preset_for(name: str, presets: Presets) -> tuple[str, str]:
    """(preset, title) of the reproduction preset whose name or title's head is ``name`` (Dr. GRPO = dr_grpo,
    GSPO = "GSPO (group sequence ...)"), ('', '') when none is."""
    key = _fold(name)
    if not key:
        return "", ""
    for preset, title in presets.items():
        if _fold(preset) == key:
            return preset, title
    for preset, title in presets.items():
        head = re.split(r"\s*\(|'s\b|\s+with\b", title, maxsplit=1)[0]
        if _fold(head) == key:
            return preset, title
    return "", ""


# -- building cards -----------------------------------------------------------------------------------------
def _kind(row: ContributionRow, tags: Iterable[str]) -> str:
    """The model's kind, unless the paper is tagged as hardware design and the model said method."""
    return "hardware" if row.kind == "method" and HARDWARE_TAG in tags else row.kind


def _area(row: ContributionRow, tags: Iterable[str], groups: TagGroups | None) -> str:
    """The model's area, unless the paper's stored tags place it in one of the lab's groups."""
    if groups:
        found = [groups.get(t, "") for t in tags]
        for area in LAB_AREAS:
            if area in found:
                return area
    return row.area


def _adoption(mentions: Sequence[MentionRow], intro_id: str | None, since: str) -> tuple[list[str], list[str]]:
    used = [m for m in mentions if m.doc_id != intro_id and m.published >= since]
    return [m.doc_id for m in used], [m.doc_id for m in used if m.compared]


def _card(
    row: ContributionRow,
    mentions: Sequence[MentionRow],
    titles: Mapping[str, str],
    tags: Sequence[str],
    groups: TagGroups | None,
    presets: Presets,
) -> MethodCard:
    used, compared = _adoption(mentions, row.doc_id, row.published)
    prior = sum(m.published < row.published for m in mentions)
    first = mentions[0] if mentions else MentionRow(row.doc_id, row.published, False)
    preset, preset_title = preset_for(row.name, presets)
    return MethodCard(
        name=row.name,
        kind=_kind(row, tags),
        area=_area(row, tags, groups),
        status="introduced",
        introduced_by=row.doc_id,
        title=titles.get(row.doc_id, ""),
        introduced_on=row.published,
        week=iso_week(row.published),
        code=row.code,
        changes=row.changes_rewritten or row.changes,
        builds_on=row.builds_on,
        also=row.also,
        used_by=tuple(used),
        compared_by=tuple(compared),
        first_seen=min(first.published, row.published) if first.published else row.published,
        first_id=first.doc_id if first.published and first.published <= row.published else row.doc_id,
        preset=preset,
        preset_title=preset_title,
        score=row.score,
        prior_mentions=prior,
    )


def cards_of(
    store: Store, rows: Sequence[ContributionRow], presets: Presets, groups: TagGroups | None = None
) -> list[MethodCard]:
    """One card per introducing row (adoption counted from the store's mentions)."""
    if not rows:
        return []
    ids = [r.doc_id for r in rows]
    mentions = store.mentions_of(r.name_key for r in rows)
    docs = store.documents(ids)
    titles = {i: d.title for i, d in docs.items()}
    tags = store.tags_of(ids)
    return [_card(r, mentions.get(r.name_key, []), titles, tags.get(r.doc_id, []), groups, presets) for r in rows]


def _order(card: MethodCard) -> tuple[Any, ...]:
    kind = KIND_ORDER.index(card.kind) if card.kind in KIND_ORDER else len(KIND_ORDER)
    return (not card.in_lab_areas, kind, -card.score, card.name.lower())


def week_cards(store: Store, week: str, presets: Presets, groups: TagGroups | None = None) -> list[MethodCard]:
    """The cards of the papers published in ISO week ``week`` (YYYY-Www), the lab's areas first, then methods
    and systems, then the surest."""
    start, end = parse_week(week)
    rows = store.introductions(start.isoformat(), end.isoformat())
    return sorted((c for c in cards_of(store, rows, presets, groups) if c.new), key=_order)


def introduced_methods(
    store: Store,
    since: str,
    until: str,
    presets: Presets,
    *,
    kinds: Sequence[str] = LEAD_KINDS,
    areas: Sequence[str] = LAB_AREAS,
    groups: TagGroups | None = None,
) -> list[MethodCard]:
    """The methods/systems (``kinds``) that papers published in [since, until] introduce, in ``areas`` (empty:
    any), surest first: a period's *new* methods."""
    rows = [r for r in store.introductions(since, until) if r.kind in kinds]
    cards = [c for c in cards_of(store, rows, presets, groups) if c.new and (not areas or c.area in areas)]
    return sorted(cards, key=_order)


def _also_card(store: Store, row: ContributionRow, also: str, presets: Presets, groups: TagGroups | None) -> MethodCard:
    """The card of a name a paper introduces beside its main one: the same paper, its own adoption and line."""
    key = name_key(also)
    as_main = replace(row, name=also, name_key=key, also=(row.name, *(a for a in row.also if a != also)))
    doc = store.get_document(row.doc_id)
    line = changes_line(doc.title, doc.abstract, also) if doc is not None else ""
    card = cards_of(store, [replace(as_main, changes=line or row.changes, changes_rewritten="")], presets, groups)
    return card[0]


def _keys(row: NameRow) -> list[str]:
    return list(dict.fromkeys(k for k in (name_key(s) for s in (row.name, *row.aliases)) if k))


def _spreading(row: NameRow, found: Mapping[str, Sequence[MentionRow]], presets: Presets) -> MethodCard:
    keys = _keys(row)
    merged: dict[str, MentionRow] = {}
    for k in keys:
        for m in found.get(k, []):
            old = merged.get(m.doc_id)
            merged[m.doc_id] = m if old is None else MentionRow(m.doc_id, m.published, old.compared or m.compared)
    mentions = sorted(merged.values(), key=lambda m: (m.published, m.doc_id))
    used, compared = _adoption(mentions, None, "")
    preset, preset_title = preset_for(row.name, presets)
    if not preset:
        for alias in row.aliases:
            preset, preset_title = preset_for(alias, presets)
            if preset:
                break
    first = mentions[0] if mentions else None
    return MethodCard(
        name=row.name,
        kind=row.kind,
        area="",
        status="spreading",
        introduced_by=None,
        title="",
        introduced_on="",
        week="",
        code=(),
        changes="",
        builds_on=(),
        also=(),
        used_by=tuple(used),
        compared_by=tuple(compared),
        first_seen=first.published if first else row.first_seen,
        first_id=first.doc_id if first else row.first_id,
        preset=preset,
        preset_title=preset_title,
        score=1.0,
    )


def card_for(
    store: Store, name: str, presets: Presets, names: Sequence[NameRow] = (), groups: TagGroups | None = None
) -> MethodCard:
    """The card of ``name`` (any spelling): from the earliest stored paper introducing it, else from the names
    table (``names``: its rows) as a spreading name."""
    key = name_key(name.strip())
    rows = store.introductions_of([key]) if key else []
    if rows:
        cards = cards_of(store, rows, presets, groups)
        return next((c for c in cards if c.new), cards[0])
    for intro in store.introductions_also_naming(name.strip()) if key else []:
        also = next((a for a in intro.also if name_key(a) == key), "")
        if also:  # introduced beside the paper's main name (CISPO in the MiniMax-M1 paper)
            return _also_card(store, intro, also, presets, groups)
    for row in names:
        if key and key in _keys(row):
            return _spreading(row, store.mentions_of(_keys(row)), presets)
    raise ContributionsError(
        f"no stored paper introduces or names {name!r}; list a week's cards with `radar methods --week YYYY-Www` "
        "or the names found with `radar methods`"
    )


def all_cards(
    store: Store, presets: Presets, names: Sequence[NameRow] = (), groups: TagGroups | None = None
) -> list[MethodCard]:
    """Every introduced name (its earliest introducing paper) and every spreading name (a names-table name of
    a kind labs adopt, named by at least ``MIN_SPREADING`` papers, that no stored paper introduces)."""
    earliest: dict[str, MethodCard] = {}
    for card in cards_of(store, store.introductions(), presets, groups):
        if card.new:
            earliest.setdefault(name_key(card.name), card)
    cards = list(earliest.values())
    spreading = [
        row
        for row in names
        if row.kind in SPREADING_KINDS and row.count >= MIN_SPREADING and not set(_keys(row)) & earliest.keys()
    ]
    found = store.mentions_of(k for row in spreading for k in _keys(row))
    return cards + [_spreading(row, found, presets) for row in spreading]
