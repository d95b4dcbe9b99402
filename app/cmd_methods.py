"""Command: methods (named things of the corpus with their kind, introducing paper, code and adoption), and
method cards: ``--week YYYY-Www`` (what that week's papers introduce) and ``--name NAME`` (one card)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import msgspec
from msgspec.structs import force_setattr
from rich.table import Table
from rich.text import Text

from radar.app.cli_helpers import (
    JSON_HELP,
    add_command,
    add_day,
    add_json,
    add_limit,
    add_week,
    open_radar,
    open_workspace,
    parse_date,
)
from radar.app.output import console, err_console, keep_whole, print_json, safe, title_line
from radar.store.text import script_mark

if TYPE_CHECKING:
    from radar.analysis.contributions.cards import MethodCard


class NameJson(msgspec.Struct, frozen=True):
    """A name of `radar methods --json`: a view msgspec fills from a stored ``NameRow``'s attributes, the kind's
    score to 3 places."""

    name: str
    kind: str
    kind_score: float
    aliases: list[str]
    introduced_by: str | None
    first_seen: str
    first_id: str
    count: int
    recent_count: int
    baseline_mentions: int
    recent_baseline_mentions: int
    code: list[str]

    def __post_init__(self) -> None:
        force_setattr(self, "kind_score", round(self.kind_score, 3))


def _line(text: str) -> Text:
    return Text(safe(text))


def _card_lines(card: MethodCard) -> list[Text]:
    head = Text()
    head.append(safe(card.name), style="bold")
    mark = script_mark(card.name)
    if mark:  # a name that mixes scripts (DАPO with a Cyrillic А) is shown as such
        head.append(f" [{safe(mark)}]", style="bold red")
    head.append(safe(f"  {card.kind or '?'} · {card.area or 'area unknown'}"))
    if card.status == "introduced":
        head.append(safe(f" · introduced by {card.introduced_by} ({card.introduced_on})"))
    elif card.status == "before-corpus":
        head.append(" · introduced before the stored papers begin: no stored paper introduces it")
    else:
        head.append(" · spreading: no stored paper introduces it")
    lines = [head]
    if card.consequence.version:
        lines.append(_line(f"  {_score(card)}"))
    if not card.named:
        lines.append(_line("  no name: a finding or recipe its paper does not name (the handle is its title's)"))
    if card.expansion:
        lines.append(_line(f"  = {card.expansion}"))
    if card.title:
        lines.append(_line(f"  paper: {title_line(card.title)}"))
    if card.changes:
        lines.append(_line(f"  changes: {card.changes}"))
    if card.builds_on:
        lines.append(_line(f"  builds on: {', '.join(card.builds_on)}"))
    if card.also:
        lines.append(_line(f"  also introduces: {', '.join(card.also)}"))
    if card.status == "introduced":
        lines.append(_line(f"  code: {', '.join(card.code) if card.code else 'no link in its abstract'}"))
    shown = ", ".join(card.used_by[:5]) + (" ..." if len(card.used_by) > 5 else "")
    naming = "later papers naming it" if card.status == "introduced" else "papers naming it"
    lines.append(
        _line(
            f"  {naming}: {len(card.used_by)}"
            + (f" ({shown})" if card.used_by else "")
            + f"; comparing against it: {len(card.compared_by)}; first seen {card.first_seen} ({card.first_id})"
        )
    )
    for other in card.other_senses:
        where = (
            f"introduced by {other.introduced_by} ({other.introduced_on})"
            if other.introduced_by
            else "not introduced by a stored paper"
        )
        papers = f"{other.papers} paper{'' if other.papers == 1 else 's'}"
        meaning = other.expansion or (f"{other.what[:120]}" if other.what else "another meaning")
        lines.append(_line(f"  also names: {meaning} ({papers}; {where})"))
    firsts: dict[str, str] = {}
    for a in card.adopted:  # oldest first: the first entry of each framework
        firsts.setdefault(a.framework, f"{a.framework} ({a.date}, {a.link or 'no link'})")
    if firsts:
        more = len(card.adopted) - len(firsts)
        lines.append(_line(f"  adopted by {'; '.join(firsts.values())}" + (f"; {more} more entries" if more else "")))
    preset = f"{card.preset} ({card.preset_title})" if card.preset else "none covers it"
    lines.append(_line(f"  reproduction preset: {preset}"))
    return lines


def _cards(args: argparse.Namespace) -> int:
    # defers the method-card stage (analysis.contributions: ~120 ms at every start)
    from radar.app import steps_contributions as contributions

    radar = open_radar(args)
    with radar.store() as store, err_console.status("deciding what new papers introduce", spinner="dots"):
        if args.week:
            cards = contributions.week(radar, store, args.week)
        else:
            cards = [contributions.name_card(radar, store, args.name)]
    if args.json:
        from radar.analysis.contributions.card import CardJson  # defers the method-card stage

        found = CardJson.builtins(cards)
        print_json(found if args.week else found[0])
        return 0
    if not cards:
        console.print(_line(f"no paper of {args.week} introduces a named method, model, system or benchmark"))
        return 0
    if not args.week:
        for line in _card_lines(cards[0]):
            console.print(line)
        typed = script_mark(args.name)
        if typed and not script_mark(cards[0].name):  # DАPO asked for, DAPO's card shown: say why
            console.print(_line(f"  note: {args.name} has {typed}; it is matched as the name it looks like"))
        return 0
    lab = sum(c.in_lab_areas for c in cards)
    console.print(
        Text(
            f"{args.week}: {len(cards)} cards in the lead's reading order (consequence: what the rank rests on), "
            f"{lab} in the lab's areas",
            style="bold",
        )
    )
    for i, card in enumerate(cards[:FULL], 1):
        for j, line in enumerate(_card_lines(card)):
            console.print(Text(f"{i:>2}. ") + line if j == 0 else Text("  ") + line)
    for i, card in enumerate(cards[FULL : args.limit], FULL + 1):  # the next ones, a line each
        console.print(_line(f"{i:>2}. {card.name}  {card.kind} · {card.area or '?'} · {_score(card)}"))
    if len(cards) > args.limit:
        console.print(_line(f"and {len(cards) - args.limit} more (--limit N shows more, --json all of them)"))
    return 0


FULL = 10  # cards of a week shown in full: what a lead reads first


def _score(card: MethodCard) -> str:
    return f"consequence {card.consequence.line}" if card.consequence.version else "no consequence score"


def cmd_methods(args: argparse.Namespace) -> int:
    from radar.analysis.names import KINDS, NamesError  # defers the names stage (~30 ms at every start)

    if args.week or args.name:
        if args.week and args.name:
            raise NamesError("give --week or --name, not both")
        if args.kind or args.since or args.as_of:
            raise NamesError("--kind, --since and --as-of list names; drop them with --week or --name")
        return _cards(args)
    from radar.analysis.names.table import Names  # defers the names stage
    from radar.app.steps import stored_names  # defers scipy, faiss, bm25s

    if args.kind and args.kind not in KINDS:
        raise NamesError(f"--kind {args.kind!r} is not a kind; use one of {', '.join(KINDS)}")
    since = parse_date(args.since, "--since")
    as_of = parse_date(args.as_of, "--as-of")
    ws = open_workspace(args)
    with ws.store() as store:
        with err_console.status("finding names (first run after new documents)", spinner="dots"):
            stored_names(store, as_of.date().isoformat() if as_of else "")
        rows = Names(store).names(kind=args.kind or "", since=since.date().isoformat() if since else "")
    if args.json:
        print_json(msgspec.to_builtins(msgspec.convert(rows, list[NameJson], from_attributes=True)))
        return 0
    if not rows:
        console.print(Text("no names found (import papers with `radar import FILE`, or widen --kind/--since)"))
        return 0
    table = Table(title=f"Names ({len(rows):,}; showing {min(len(rows), args.limit)})", title_justify="left")
    for col in ("name", "kind", "first seen", "introduced by", "docs", "recent", "as baseline", "code"):
        table.add_column(col, overflow="fold", justify="right" if col in {"docs", "recent", "as baseline"} else "left")
    shown_rows = []
    for r in rows[: args.limit]:
        shown = safe(r.name + (f" (= {', '.join(r.aliases[:2])})" if r.aliases else ""))
        mark = next((script_mark(n) for n in (r.name, *r.aliases) if script_mark(n)), "")
        shown += f" [{mark}]" if mark else ""  # DАPO with a Cyrillic А is not silently DAPO
        cells = [shown, r.kind, r.first_seen, r.introduced_by or "-", r.count, r.recent_count, r.baseline_mentions]
        table.add_row(*[Text(str(v)) for v in cells], Text(r.code[0] if r.code else "-"))
        shown_rows.append(cells)
    console.print(keep_whole(table, shown_rows, {"kind", "first seen", "introduced by"}, cap=12))  # arXiv ids whole
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = add_command(
        sub,
        "methods",
        cmd_methods,
        help="named things (methods, models, benchmarks, systems, ...) with their kind and adoption; method cards",
        description="Names found in the stored titles and abstracts, with their kind (method, model, benchmark, "
        "system, hardware, metric, org, generic) decided from corpus evidence, the paper that introduced them, "
        "its code links, and how many papers compare against them (used as a baseline). Works without "
        "embeddings; recomputed when documents change. With --week or --name: method cards (what a paper "
        "introduces, what it changes and builds on, its own code link, the later papers naming it, the "
        "reproduction preset that covers it).",
    )
    p.add_argument("--kind", metavar="KIND", help="only this kind (method, model, benchmark, system, ...)")
    add_day(p, "--since", "only names first seen on or after this day")
    add_day(p, "--as-of", "use only documents published on or before this day")
    add_week(p, "the method cards of that ISO week's papers, in the lead's reading order")
    p.add_argument("--name", metavar="NAME", help="the method card of one name (any spelling)")
    add_limit(
        p,
        30,
        "rows shown, or a week's cards listed (the first 10 in full, the rest a line each; default 30; not --json)",
    )
    add_json(p, JSON_HELP + " (a list of names or cards; one card for --name)")
