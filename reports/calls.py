"""The report's "Last month's calls": the product checking itself in front of its user.

For the weeks 4, 8 and 12 before the report's period, what the radar flagged then ("evaluate" and "reproduce" for
a new method of that week: read from that week's stored report when there is one, else decided again by the same
rule on the cards' day-0 consequence, which is what the radar knew that week), and whether each was picked up
since: later papers of its own sense naming it (counted up to the end of the report's period, never after) or a
framework adopting it. Beside it, the same share for that week's other lab-area methods and systems that nobody
flagged: a flag worth having is picked up more often than what it passed over.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import msgspec

from radar.analysis.contributions.cards import MethodCard
from radar.analysis.contributions.labels import LAB_AREAS
from radar.reports.recommend import EVALUATE_AT
from radar.reports.text import plain

WEEKS_AGO = (4, 8, 12)
FLAGGED = ("adopt", "reproduce", "evaluate")
LEAD_KINDS = ("method", "system", "hardware")


class CallRow(msgspec.Struct, frozen=True):
    """One flagged card and what came of it."""

    name: str
    action: str
    introduced_by: str
    url: str
    score: float  # its day-0 consequence score
    uses: int  # later papers of its sense naming it by the report's period's end
    frameworks: list[str]  # frameworks that took it in by then
    picked_up: bool


class WeekCalls(msgspec.Struct, frozen=True):
    week: str
    weeks_ago: int
    source: str  # "report" (that week's stored report) or "decided again" (no report was stored)
    calls: list[CallRow]
    flagged_picked: int
    unflagged: int  # that week's other named lab-area methods and systems
    unflagged_picked: int


class CallsSection(msgspec.Struct, frozen=True, kw_only=True):
    """The section as report.json holds it: ``{}`` when no earlier week was looked at (a report of the workspace's
    first weeks, or one written before the section existed)."""

    until: str | msgspec.UnsetType = msgspec.UNSET  # the day counts run to: the report's period's end
    weeks: list[WeekCalls] | msgspec.UnsetType = msgspec.UNSET
    flagged: int | msgspec.UnsetType = msgspec.UNSET
    flagged_picked: int | msgspec.UnsetType = msgspec.UNSET
    unflagged: int | msgspec.UnsetType = msgspec.UNSET
    unflagged_picked: int | msgspec.UnsetType = msgspec.UNSET


@dataclass(frozen=True, slots=True)
class PastWeek:
    """What the composition root hands in for one earlier week: its cards (the week listing's, in its order),
    the papers' days of each card's later mentions and the names that week's stored report flagged (None when no
    report was stored)."""

    week: str
    weeks_ago: int
    cards: Sequence[MethodCard]
    flagged: Mapping[str, str] | None  # name -> action, from that week's report.json


def _decided(card: MethodCard, presets: bool = True) -> str:
    """The action the radar takes on a new card by its day-0 score: reproduce where a preset expresses it, else
    evaluate above ``EVALUATE_AT`` ('' otherwise)."""
    if presets and card.preset:
        return "reproduce"
    return "evaluate" if card.consequence.day0 >= EVALUATE_AT else ""


def _in_scope(card: MethodCard, areas: Sequence[str]) -> bool:
    return card.named and card.kind in LEAD_KINDS and card.area in (areas or LAB_AREAS)


def _uses(card: MethodCard, days: Mapping[str, str], until: str) -> int:
    return sum(1 for d in card.used_by if days.get(d, "9999") <= until)


def _frameworks(card: MethodCard, until: str) -> list[str]:
    return list(dict.fromkeys(a.framework for a in card.adopted if a.date[:10] <= until))


def last_calls(
    past: Sequence[PastWeek], areas: Sequence[str], days: Mapping[str, str], urls: Mapping[str, str], until: str
) -> CallsSection:
    """The section for the report whose period ends on ``until`` (YYYY-MM-DD). ``days``: the day each paper
    entered the record (the later mentions are counted up to ``until``); ``urls``: the introducing papers' links."""
    weeks: list[WeekCalls] = []
    for w in past:
        scope = [c for c in w.cards if _in_scope(c, areas)]
        calls: list[CallRow] = []
        unflagged, unflagged_picked = 0, 0
        for c in scope:
            action = w.flagged.get(c.name, "") if w.flagged is not None else _decided(c)
            uses = _uses(c, days, until)
            fws = _frameworks(c, until)
            picked = uses > 0 or bool(fws)
            if action in FLAGGED:
                intro = c.introduced_by or ""
                score = round(c.consequence.day0, 2)
                calls.append(CallRow(plain(c.name), action, intro, urls.get(intro, ""), score, uses, fws, picked))
            else:
                unflagged += 1
                unflagged_picked += picked
        source = "report" if w.flagged is not None else "decided again"
        picked_up = sum(c.picked_up for c in calls)
        weeks.append(WeekCalls(w.week, w.weeks_ago, source, calls, picked_up, unflagged, unflagged_picked))
    return CallsSection(
        until=until,
        weeks=weeks,
        flagged=sum(len(w.calls) for w in weeks),
        flagged_picked=sum(w.flagged_picked for w in weeks),
        unflagged=sum(w.unflagged for w in weeks),
        unflagged_picked=sum(w.unflagged_picked for w in weeks),
    )
