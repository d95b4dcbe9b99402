"""The report's "New this week": the method cards of the period's papers (analysis.contributions), read first.

The cards come from the composition root: for a week, exactly what `radar methods --week` lists (the same
``week_cards``), so the report, the CLI and the dashboard name the same methods. Here they are split:

- ``cards``: the methods, systems and hardware designs in the profile's areas (the lab groups its tags belong to),
  in the cards' own order (their consequence: the lead's reading order, the one `radar methods --week` and the
  dashboard show; the profile cuts the list, never reorders it), each with its name, kind, its consequence score and
  the evidence behind it, what it changes, what it builds on, the introducing paper (its link), the paper's own code
  links and the reproduction preset that covers it ("no preset" when none does): the first ``MAX_CARDS`` in full,
  the rest (``compact``) one line each with what it changes;
- ``more``: the models, benchmarks and other names in the profile's areas, by name, in one line;
- ``others``: the cards outside the profile's areas, by name, in one line.

Feed text (names, titles, what a method changes) goes through the report's LaTeX-to-text step here and is
escaped by the renderer like every other field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from radar.analysis.contributions.cards import MethodCard
from radar.analysis.contributions.labels import LAB_AREAS
from radar.reports.config import Profile
from radar.reports.text import plain

MAX_CARDS = 20
READ_THIS = 5  # cards the brief names per lab area
LEAD_KINDS = ("method", "system", "hardware")


class CardRef(msgspec.Struct, frozen=True):
    """A card by name, as report.json lists it (built from the card: ``_ref``)."""

    name: str
    kind: str
    area: str
    introduced_by: str
    url: str
    # a report.json written before the consequence ranking (2-6 Dec 2026) lacks these three: read as unranked
    score: float = 0.0  # its consequence score to 2 places (0 for a card with no introducing paper)
    why: str = ""  # the evidence behind its rank, one line
    named: bool = True


class CompactRef(CardRef, frozen=True, kw_only=True):
    """A card past the first ``MAX_CARDS``: one line, with what it changes."""

    changes: str


class CardRow(CardRef, frozen=True, kw_only=True):
    """A card in full."""

    title: str
    introduced_on: str
    changes: str
    builds_on: list[str]
    also: list[str]
    code: list[str]
    preset: str
    preset_title: str
    uses: int
    compares: int


class NewThisWeek(msgspec.Struct, frozen=True, kw_only=True):
    """The section as report.json holds it (empty, total 0, in a report written before it existed)."""

    areas: list[str] = []
    total: int = 0
    in_areas: int = 0
    cards: list[CardRow] = []
    compact: list[CompactRef] = []
    more: list[CardRef] = []
    others: list[CardRef] = []


def profile_areas(profile: Profile, group_of: Mapping[str, str]) -> list[str]:
    """The lab areas of the profile's tags (the taxonomy's groups of its positive tags), in the lab's order; both
    of the lab's areas for a profile that names no tag (terms or liked papers only)."""
    wanted = [t for t, w in profile.tags.items() if w > 0]
    if not wanted:
        return list(LAB_AREAS)
    groups = {group_of.get(t, "") for t in wanted}
    return [a for a in LAB_AREAS if a in groups]


def _ref(card: MethodCard, urls: Mapping[str, str]) -> tuple[str, str, str, str, str, float, str, bool]:
    """A card's ``CardRef`` fields, in order."""
    intro, score = card.introduced_by or "", round(card.consequence.score, 2)
    why = "; ".join(card.consequence.evidence)
    return plain(card.name), card.kind, card.area, intro, urls.get(intro, ""), score, why, card.named


def _full(card: MethodCard, urls: Mapping[str, str]) -> CardRow:
    return CardRow(
        *_ref(card, urls),
        title=plain(card.title),
        introduced_on=card.introduced_on,
        changes=plain(card.changes),
        builds_on=[plain(b) for b in card.builds_on],
        also=[plain(a) for a in card.also],
        code=list(card.code),
        preset=card.preset,
        preset_title=card.preset_title,
        uses=len(card.used_by),
        compares=len(card.compared_by),
    )


def new_this_week(cards: Sequence[MethodCard], areas: Sequence[str], urls: Mapping[str, str]) -> NewThisWeek:
    """The section as report.json holds it. ``cards``: the period's cards in their order (the week listing's);
    ``areas``: the profile's areas; ``urls``: a paper's link. The order is the cards'; the profile only cuts."""
    mine = [c for c in cards if c.area in areas]
    lead = [c for c in mine if c.kind in LEAD_KINDS]
    return NewThisWeek(
        areas=list(areas),
        total=len(cards),
        in_areas=len(mine),
        cards=[_full(c, urls) for c in lead[:MAX_CARDS]],
        compact=[CompactRef(*_ref(c, urls), changes=plain(c.changes)) for c in lead[MAX_CARDS:]],
        more=[CardRef(*_ref(c, urls)) for c in mine if c.kind not in LEAD_KINDS],
        others=[CardRef(*_ref(c, urls)) for c in cards if c.area not in areas],
    )


def read_this(section: NewThisWeek, per_area: int = READ_THIS) -> dict[str, list[CardRow]]:
    """The brief's "read this": the first ``per_area`` full cards of each of the profile's areas, in the section's
    order."""
    out: dict[str, list[CardRow]] = {}
    for c in section.cards:
        picked = out.setdefault(c.area, [])
        if len(picked) < per_area:
            picked.append(c)
    return {a: out[a] for a in section.areas if a in out}


def names(section: NewThisWeek) -> list[str]:
    """Every name the section shows, in its order (cards, then the two lines)."""
    shown: list[Sequence[CardRef]] = [section.cards, section.compact, section.more, section.others]
    return [c.name for cards in shown for c in cards]
