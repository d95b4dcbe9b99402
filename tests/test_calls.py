"""The report's "Last month's calls" (reports.calls) and the brief's "read this" (reports.new_this_week), and a
kind the issue named wrong (FlashAttention-4 is a method, not hardware)."""

from __future__ import annotations

from dataclasses import replace

import msgspec

from radar.analysis.contributions.adoptions import Adopted
from radar.analysis.contributions.cards import MethodCard
from radar.analysis.contributions.consequence import Score
from radar.analysis.contributions.find import contribution_of
from radar.reports.calls import CallsSection, PastWeek, last_calls
from radar.reports.new_this_week import CardRow, NewThisWeek, read_this
from radar.reports.recommend import EVALUATE_AT
from tests.snapshot_data import snapshot_documents

BASE = MethodCard(
    name="X", kind="method", area="rl-post-training", status="introduced", introduced_by="p0", title="X",
    introduced_on="2025-08-25", week="2025-W35", code=(), changes="", builds_on=(), also=(), used_by=(),
    compared_by=(), first_seen="2025-08-25", first_id="p0", preset="", preset_title="", score=0.9,
)  # fmt: skip


def card(name: str, day0: float, used_by: tuple[str, ...] = (), **kw: object) -> MethodCard:
    return replace(BASE, name=name, introduced_by=f"id-{name}", used_by=used_by,
                   consequence=Score(0.99, day0, 3, (), "v"), **kw)  # type: ignore[arg-type]  # fmt: skip


def test_last_months_calls_are_decided_on_day0_and_checked_against_what_came_after() -> None:
    """A week with no stored report is decided again on the day-0 scores (reproduce where a preset expresses it,
    evaluate at EVALUATE_AT); a call is picked up by a later paper of its sense by the report's end (not after) or
    a framework taking it in; the unflagged lab-area cards are counted beside it; cards outside the areas and
    findings with no name are left out."""
    days = {"a": "2025-09-02", "b": "2025-10-30", "c": "2025-09-10"}
    trl = Adopted("TRL", "2025-09-15", "https://github.com/huggingface/trl/commit/1", "commit", "Add Q", "name")
    cards = [
        card("Q", EVALUATE_AT, used_by=("b",), adopted=(trl,)),  # evaluate; picked up by TRL (its paper is later)
        card("P", 0.1, preset="pspo"),  # reproduce (a preset expresses it); not picked up
        card("L", EVALUATE_AT - 0.01, used_by=("a", "c")),  # unflagged, picked up
        card("M", 0.2),  # unflagged, not picked up
        card("V", 0.99, area="other"),  # outside the areas
        card("U", 0.99, named=False),  # a finding with no name
    ]
    decided = PastWeek("2025-W35", 4, cards, None)
    stored = PastWeek("2025-W31", 8, [card("S", 0.1, used_by=("a",))], {"S": "evaluate"})
    section = msgspec.to_builtins(
        last_calls([decided, stored], ["rl-post-training"], days, {"id-Q": "https://arxiv.org/abs/q"}, "2025-09-28")
    )
    w35, w31 = section["weeks"]
    assert w35["source"] == "decided again" and w31["source"] == "report"
    assert [(c["name"], c["action"], c["picked_up"]) for c in w35["calls"]] == [
        ("Q", "evaluate", True),
        ("P", "reproduce", False),
    ]
    q = w35["calls"][0]
    assert q["uses"] == 0 and q["frameworks"] == ["TRL"] and q["url"] == "https://arxiv.org/abs/q"
    assert (w35["unflagged"], w35["unflagged_picked"]) == (2, 1)
    assert [(c["name"], c["action"], c["picked_up"]) for c in w31["calls"]] == [("S", "evaluate", True)]
    assert (section["flagged"], section["flagged_picked"], section["unflagged"]) == (3, 2, 2)
    # counted up to the report's end: a week earlier, TRL had not yet taken Q in
    early = last_calls([decided], ["rl-post-training"], days, {}, "2025-09-14")
    assert early.weeks and early.weeks[0].calls[0].picked_up is False


def test_no_earlier_week_writes_an_empty_section_and_zero_counts_are_written() -> None:
    """report.json's calls: ``{}`` when no earlier week was looked at (CallsSection's fields unset, as the dict it
    was), every count written when there were weeks, zeros too."""
    assert msgspec.to_builtins(CallsSection()) == {}
    section = msgspec.to_builtins(last_calls([], ["rl-post-training"], {}, {}, "2025-09-28"))
    assert section == dict.fromkeys(("flagged", "flagged_picked", "unflagged", "unflagged_picked"), 0) | {
        "until": "2025-09-28",
        "weeks": [],
    }
    assert list(section) == ["until", "weeks", "flagged", "flagged_picked", "unflagged", "unflagged_picked"]


def test_read_this_names_at_most_five_per_area_in_the_sections_order() -> None:
    named = [(f"R{i}", "rl-post-training") for i in range(7)] + [("H0", "hardware-systems"), ("O0", "other-llm")]
    blank = {"title": "", "introduced_on": "", "changes": "", "builds_on": [], "also": [], "code": [], "preset": ""}
    blank |= {"preset_title": "", "uses": 0, "compares": 0}
    cards = [CardRow(n, "method", a, "", "", 0.5, "", True, **blank) for n, a in named]
    picked = read_this(NewThisWeek(areas=["rl-post-training", "hardware-systems"], cards=cards))
    assert list(picked) == ["rl-post-training", "hardware-systems"]
    assert [c.name for c in picked["rl-post-training"]] == ["R0", "R1", "R2", "R3", "R4"]
    assert [c.name for c in picked["hardware-systems"]] == ["H0"]


def test_flashattention_4_is_a_method_not_hardware() -> None:
    """Its title's head "Algorithm and Kernel Pipelining Co-Design" names software, not a chip."""
    (doc,) = snapshot_documents(lambda r: r["id"] == "2603.05451")
    c = contribution_of(doc)
    assert (c.introduces, c.name, c.kind) == (True, "FlashAttention-4", "method")
