"""Methods: the chosen week's method cards (what its papers introduce) in the lead's reading order (their
consequence score and what it rests on), and one card in detail: what it changes and builds on, its paper and
that paper's own code links, the later papers naming it and those comparing against it (their ids), when it was
first seen, the reproduction preset that covers it.

The cards are the ones `radar methods --week` lists and the report's "New this week" shows, in the same order (the
same ``week_cards`` on the stored contributions, which `radar import`, `radar crawl` and the report keep up to
date). The page reads them: it decides nothing and never calls the summary endpoint on open.
"""

from __future__ import annotations

import msgspec
import streamlit as st

from radar.analysis.contributions.adoptions import Adoptions
from radar.analysis.contributions.card import CardJson
from radar.analysis.contributions.frameworks import with_adoptions
from radar.analysis.contributions.labels import LAB_AREAS
from radar.analysis.contributions.week import week_cards as cards_of_week
from radar.app import steps_contributions
from radar.app.dashboard import data, period
from radar.crawler.documents import Documents

DETAIL = "methods_card"
MAX_IDS = 40  # ids listed per line of a card's detail (the count is always the whole list's)


@data.cache_data
def week_cards(root: str, ver: str, label: str) -> list[CardJson]:
    """The week's cards as `radar methods --week --json` prints them (``CardJson``: rounded scores, no preset as
    None)."""

    radar = data.radar(root)
    presets, groups = steps_contributions.presets(radar), steps_contributions.tag_groups(radar)
    found: list[CardJson] = data.read(
        root, lambda s: [CardJson.of(c) for c in with_adoptions(Adoptions(s), cards_of_week(s, label, presets, groups))]
    )
    return found


@data.cache_data
def paper_urls(root: str, ver: str, ids: tuple[str, ...]) -> dict[str, str]:
    found: dict[str, str] = data.read(root, lambda s: {i: d.url for i, d in Documents(s).of(ids).items()})
    return found


def render() -> None:
    root = data.page_root()
    ver = data.version(root)
    st.title("Methods")
    week = period.picker(root, ver)
    if week is None:
        st.info("The workspace is empty: run `radar crawl` or `radar import FILE` first.")
        return
    cards = week_cards(root, ver, week.label)
    adopted = [c for c in cards if c.adopted]
    only = st.checkbox(
        f"Adopted by a framework ({len(adopted)})",
        key="methods_adopted",
        help="only the cards a framework's commit or release names ([[sources]] type = framework)",
    )
    if only:
        cards = adopted

    lab = [c for c in cards if c.area in LAB_AREAS]
    st.caption(
        data.ours(
            f"{week.label}: {len(cards)} names its papers introduce, {len(lab)} in the lab's areas; in the lead's "
            f"reading order (consequence), the cards and order of `radar methods --week {week.label}` and the "
            "report's New this week"
        )
    )
    if not cards:
        none = "a framework adopted" if only else "introduces a named method, model, system or benchmark"
        st.info(data.ours(f"no paper of {week.label} {none}"))
        return
    st.dataframe(
        data.table([_row(c) for c in cards]),
        hide_index=True,
        width="stretch",
        column_config={  # short columns first, what it changes last: a narrow screen cuts only that
            "method": st.column_config.TextColumn(width="medium"),
            "consequence": st.column_config.NumberColumn(format="%.2f"),
            "changes": st.column_config.TextColumn(width="large"),
        },
    )
    names = [c.name for c in cards]
    picked = st.selectbox(
        "Card", range(len(cards)), key=DETAIL, format_func=lambda i: f"{names[i]} ({cards[i].introduced_by})"
    )
    _detail(root, ver, cards[picked or 0])


class CardRow(msgspec.Struct, frozen=True, rename={"later_papers": "later papers", "adopted_by": "adopted by"}):
    """A card as the page's table shows it: short columns first, what it changes last."""

    method: str
    consequence: float
    why: str
    kind: str
    area: str
    paper: str | None
    later_papers: int
    comparing: int
    preset: str
    adopted_by: str
    code: str
    changes: str


def _row(c: CardJson) -> CardRow:
    return CardRow(
        method=c.name,
        consequence=c.consequence.score,
        why="; ".join(c.consequence.evidence),
        kind=c.kind if c.named else f"{c.kind} (no name: its title's handle)",
        area=c.area or "-",
        paper=c.introduced_by,
        later_papers=c.uses,
        comparing=c.compares,
        preset=c.preset or "no preset",
        adopted_by=", ".join(dict.fromkeys(a.framework for a in c.adopted)) or "-",
        code="yes" if c.code else "no",
        changes=data.one_line(c.changes, 160),
    )


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:MAX_IDS]) + (f" ... ({len(ids) - MAX_IDS} more)" if len(ids) > MAX_IDS else "")
    return shown or "none yet"


def _detail(root: str, ver: str, card: CardJson) -> None:
    st.subheader(data.md(card.name))
    st.caption(data.md(f"{card.kind} · {card.area or 'area unknown'} · introduced {card.introduced_on}"))
    st.markdown(data.text(card.changes or "-"))
    paper = card.introduced_by or ""
    url = paper_urls(root, ver, (paper,)).get(paper, "")
    st.markdown(
        "**Paper:** " + data.link(data.text(card.title or paper), url) + data.md(f" ({paper})")
        if paper
        else "**Paper:** -"
    )
    lines = [
        ("Builds on", ", ".join(card.builds_on) or "-"),
        ("Also introduces", ", ".join(card.also) or "-"),
        ("Later papers naming it", f"{card.uses}: {_ids(card.used_by)}"),
        ("Of those, comparing against it", f"{card.compares}: {_ids(card.compared_by)}"),
        ("First seen", f"{card.first_seen} ({card.first_id})"),
        ("Reproduction preset", f"{card.preset} ({card.preset_title})" if card.preset else "no preset"),
    ]
    for label, value in lines:
        st.markdown(f"**{label}:** " + data.text(value))
    firsts: dict[str, str] = {}
    for a in card.adopted:  # oldest first: each framework's first commit or release naming it
        firsts.setdefault(a.framework, data.link(data.text(f"{a.framework} ({a.date})"), a.link))
    st.markdown("**Adopted by:** " + (", ".join(firsts.values()) if firsts else "no framework yet"))
    code = [data.link(data.md(link), link) for link in card.code]
    st.markdown("**Code (its own abstract's links):** " + (", ".join(code) if code else "no link in its abstract"))


if __name__ == "__main__":
    render()
