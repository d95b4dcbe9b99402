"""Commands: people (add, import a library, list, set a profile, like / dislike, saved searches), digest
(one person's top papers of a week) and alerts (what a person's saved searches would send)."""

from __future__ import annotations

import argparse
from pathlib import Path

import msgspec
from rich.text import Text

from radar.app.cli_helpers import add_day, add_json, add_week, open_radar
from radar.app.output import console, print_json, safe, title_line
from radar.reports.people.library import describe
from radar.reports.people.repository import People, PersonProfile, SearchFilters
from radar.reports.period import resolve_period
from radar.store.errors import StoreError


def _weights(values: list[str] | None, what: str) -> dict[str, float]:
    """NAME or NAME=WEIGHT (weight in (0, 10])."""
    out = {}
    for raw in values or []:
        name, _, weight = raw.partition("=")
        try:
            w = float(weight) if weight else 1.0
        except ValueError:
            raise StoreError(f"{what} {raw!r}: the weight after '=' must be a number, e.g. {name}=2") from None
        if not name.strip() or not 0 < w <= 10:
            raise StoreError(f"{what} {raw!r} must be NAME or NAME=WEIGHT with a weight in (0, 10]")
        out[name.strip()] = w
    return out


def cmd_people_add(args: argparse.Namespace) -> int:
    with open_radar(args).store() as store:
        person = People(store).add_person(args.name, email=args.email or "", webhook=args.webhook or "")
    console.print(Text(f"added {person.name}" + (f" <{person.email}>" if person.email else "")))
    return 0


def cmd_people_import(args: argparse.Namespace) -> int:
    from radar.app import steps_people  # defers scipy, faiss, bm25s

    found = steps_people.import_library(open_radar(args), args.name, Path(args.file))
    if args.json:
        print_json(
            {
                "person": args.name,
                "matched": [{"id": m.doc_id, "how": m.how, "key": m.entry.key} for m in found.matched],
                "unmatched": msgspec.to_builtins([describe(e) for e in found.unmatched]),
            }
        )
        return 0
    total = len(found.matched) + len(found.unmatched)
    console.print(Text(f"{args.name}: {len(found.doc_ids)} liked papers from {total} entries of {args.file}"))
    if found.unmatched:
        console.print(Text(f"not in the workspace ({len(found.unmatched)}; import or crawl them, then re-import):"))
        for e in found.unmatched:
            title = title_line(e.title) if e.title else "(no title)"  # one clipped line, whatever the file holds
            console.print(
                Text(f"  {title_line(e.key, 80)}: {title}" + (f" [{safe(e.arxiv_id)}]" if e.arxiv_id else ""))
            )
    return 0


class PersonRow(msgspec.Struct, frozen=True):
    """A person as `radar people list` shows them (its fields are the --json keys)."""

    name: str
    email: str
    webhook: bool  # whether one is set (the url is a secret)
    liked: int
    disliked: int
    saved_searches: list[str]
    profile: PersonProfile


def cmd_people_list(args: argparse.Namespace) -> int:
    with open_radar(args).store() as store:
        counts = People(store).feedback_counts()
        rows = [
            PersonRow(
                p.name,
                p.email,
                bool(p.webhook),
                *counts.get(p.name, (0, 0)),
                [s.name for s in People(store).saved_searches(p.name)],
                p.profile,
            )
            for p in People(store).people()
        ]
    if args.json:
        print_json(msgspec.to_builtins(rows))
    elif not rows:
        console.print("no people yet; add one with `radar people add NAME --email ADDR`", markup=False)
    for r in [] if args.json else rows:
        prof = r.profile
        follows = ", ".join([*prof.tags, *prof.terms, *prof.authors, *prof.institutions]) or "-"
        console.print(
            Text(
                f"{r.name:<16} {r.email or '-':<28} liked {r.liked:>4}  not-for-me {r.disliked:>3}  "
                f"searches {len(r.saved_searches)}  follows: {follows}"
            )
        )
    return 0


def cmd_people_set(args: argparse.Namespace) -> int:
    from dataclasses import replace

    with open_radar(args).store() as store:
        person = People(store).person(args.name)
        p = person.profile
        profile = replace(
            p,
            tags=p.tags | _weights(args.tag, "--tag"),
            terms=p.terms | _weights(args.term, "--term"),
            negative_terms=tuple(dict.fromkeys([*p.negative_terms, *(args.not_term or [])])),
            authors=tuple(dict.fromkeys([*p.authors, *(args.author or [])])),
            institutions=tuple(dict.fromkeys([*p.institutions, *(args.institution or [])])),
            min_score=p.min_score if args.min_score is None else args.min_score,
        )
        for name in args.drop or []:
            profile = replace(
                profile,
                tags={k: v for k, v in profile.tags.items() if k != name},
                terms={k: v for k, v in profile.terms.items() if k != name},
                negative_terms=tuple(t for t in profile.negative_terms if t != name),
                authors=tuple(a for a in profile.authors if a != name),
                institutions=tuple(i for i in profile.institutions if i != name),
            )
        person = People(store).update_person(args.name, email=args.email, webhook=args.webhook, profile=profile)
    console.print(Text(f"{person.name}: {msgspec.json.decode(msgspec.json.encode(person.profile))}"))
    return 0


def _cmd_feedback(args: argparse.Namespace, value: int) -> int:
    with open_radar(args).store() as store:
        written = People(store).record_feedback(args.name, args.ids, value, "cli")
    missing = len(set(args.ids)) - written
    word = "liked" if value > 0 else "not for me"
    console.print(
        Text(f"{args.name}: {written} marked {word}" + (f"; {missing} not in the workspace" if missing else ""))
    )
    return 0 if written else 1


def cmd_people_search(args: argparse.Namespace) -> int:
    from radar.reports.people.alerts import DEFAULT_MIN_SCORE  # defers scipy, faiss, bm25s

    filters: SearchFilters = {}
    if args.tag:
        filters["tags"] = args.tag
    if args.kind:
        filters["kinds"] = args.kind
    if args.since:
        filters["since"] = args.since
    with open_radar(args).store() as store:
        search = People(store).save_search(
            args.name,
            args.label,
            args.query,
            filters=filters,
            min_score=DEFAULT_MIN_SCORE if args.min_score is None else args.min_score,
        )
    console.print(Text(f"{args.name}: saved search {search.name!r} = {search.query!r} (cut-off {search.min_score})"))
    return 0


def cmd_digest(args: argparse.Namespace) -> int:
    from radar.app import steps_people  # defers scipy, faiss, bm25s

    radar = open_radar(args)
    with radar.store() as store:
        People(store).person(args.name)
        period = resolve_period(store, week=args.week)
    d = steps_people.digest(radar, args.name, period)
    if args.json:
        from radar.reports.people.digest import DigestJson  # defers scipy, requests

        print_json(msgspec.to_builtins(DigestJson.of(d)))
        return 0
    from radar.reports.people.digest import render_text  # defers scipy, requests

    console.print(Text(render_text(d).rstrip()))
    return 0


def cmd_alerts_test(args: argparse.Namespace) -> int:
    from radar.app import steps_people  # defers scipy, faiss, bm25s

    msg, channels = steps_people.alerts_preview(open_radar(args), args.name)
    if args.json:
        from radar.reports.people.alerts import AlertMessageJson  # defers scipy, requests, faiss

        print_json(msgspec.to_builtins(AlertMessageJson.of(msg, channels)))
        return 0
    if not msg.alerts:
        console.print(Text(f"{args.name}: nothing to send (no new matches of the saved searches above their cut-off)"))
        return 0
    console.print(Text(f"would send to {', '.join(channels) or 'no channel (set --email or --webhook)'}:"))
    console.print(Text(f"Subject: {msg.subject}\n{msg.text.rstrip()}"))
    return 0


def cmd_alerts_run(args: argparse.Namespace) -> int:
    from radar.app import steps_people  # defers scipy, faiss, bm25s
    from radar.reports.deliver import summarize_outcomes  # defers requests

    runs = steps_people.alerts(open_radar(args))
    for run in runs:
        console.print(Text(f"{run.person}: {len(run.new)} new match(es); {summarize_outcomes(run.outcomes)}"))
    if not runs:
        console.print("no saved searches; add one with `radar people search NAME LABEL QUERY`", markup=False)
    return 2 if any(o.status == "failed" for r in runs for o in r.outcomes) else 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("people", help="people: their libraries, profiles, feedback and saved searches")
    ps = p.add_subparsers(dest="people_command", metavar="SUBCOMMAND")
    ps.required = True

    a = ps.add_parser("add", help="add a person")
    a.add_argument("name")
    a.add_argument("--email", metavar="ADDR", help="where their digest and alerts go")
    a.add_argument("--webhook", metavar="URL", help="a Slack-compatible incoming webhook for their alerts")
    a.set_defaults(func=cmd_people_add)

    i = ps.add_parser("import", help="import a BibTeX (.bib) or Zotero CSL JSON (.json) library as liked papers")
    i.add_argument("name")
    i.add_argument("file", metavar="FILE.bib|FILE.json")
    add_json(i)
    i.set_defaults(func=cmd_people_import)

    li = ps.add_parser("list", help="list people with their profile and feedback counts")
    add_json(li)
    li.set_defaults(func=cmd_people_list)

    s = ps.add_parser("set", help="edit a person's profile (adds to what is there; --drop removes)")
    s.add_argument("name")
    s.add_argument("--tag", action="append", metavar="TAG[=W]", help="follow a tag (weight 1 unless given)")
    s.add_argument("--term", action="append", metavar="TERM[=W]", help="follow a term")
    s.add_argument("--not-term", action="append", metavar="TERM", help="leave out papers naming this term")
    s.add_argument("--author", action="append", metavar="NAME", help="follow an author")
    s.add_argument("--institution", action="append", metavar="NAME", help="follow an institution")
    s.add_argument("--min-score", type=float, metavar="X", help="digest score cut-off")
    s.add_argument("--drop", action="append", metavar="NAME", help="remove a tag, term, author or institution")
    s.add_argument("--email", metavar="ADDR")
    s.add_argument("--webhook", metavar="URL")
    s.set_defaults(func=cmd_people_set)

    for verb, value, text in (("like", 1, "mark papers liked"), ("dislike", -1, "mark papers not for me")):
        f = ps.add_parser(verb, help=text)
        f.add_argument("name")
        f.add_argument("ids", nargs="+", metavar="ID")
        f.set_defaults(func=lambda args, value=value: _cmd_feedback(args, value))

    q = ps.add_parser("search", help="save a search whose new matches alert the person")
    q.add_argument("name")
    q.add_argument("label", help="a short name for the search")
    q.add_argument("query")
    q.add_argument("--tag", action="append", metavar="TAG", help="only papers with this tag")
    q.add_argument("--kind", action="append", choices=("paper", "post"), help="only papers or posts")
    add_day(q, "--since", "only documents published since")
    q.add_argument("--min-score", type=float, metavar="X", help="cosine cut-off of a match (default 0.35)")
    q.set_defaults(func=cmd_people_search)

    d = sub.add_parser("digest", help="one person's top papers of a week, and their alerts")
    d.add_argument("name")
    add_week(d, "ISO week; 'last' (default) = the last full week; 'latest' = the latest full week the workspace covers")
    add_json(d)
    d.set_defaults(func=cmd_digest)

    al = sub.add_parser("alerts", help="saved-search alerts: test (show what would be sent) and run")
    als = al.add_subparsers(dest="alerts_command", metavar="SUBCOMMAND")
    als.required = True
    t = als.add_parser("test", help="show what a person's saved searches would send now (nothing is sent)")
    t.add_argument("name")
    add_json(t)
    t.set_defaults(func=cmd_alerts_test)
    r = als.add_parser("run", help="run every saved search now and send new matches (once each)")
    r.set_defaults(func=cmd_alerts_run)
