"""Codec benchmark: every method card of a workspace encoded to JSON and decoded back into typed records, by the
hand-written ``as_dict`` + orjson the cards had before (the baseline, kept here), orjson on the dataclasses,
msgspec (the product's codec), pydantic's TypeAdapter and cattrs; each library's import time; `radar --help`
start-up of this checkout and of an older one.

    .venv/bin/python benchmarks/bench_codec.py --workspace DIR [--repeats 3] [--limit N] [--before DIR]

The cards are ``week.named_cards`` over every stored paper, ranked (``week.rank``: each carries its consequence
score), as `radar methods --week` builds them. ``--workspace`` is opened for writing (SQLite's WAL): run it on a
copy of a workspace you must not change (``cp -a WS /tmp/ws``). pydantic and cattrs are not dependencies of radar:
install them in the venv to time them (their rows are skipped otherwise).

- encode, the JSON `radar methods --json` prints: the hand ``as_dict`` + ``orjson.dumps``; msgspec's view
  (``card.CardJson.of`` + ``msgspec.json.encode``). Both outputs are checked equal.
- encode, the whole record (every field, nested records as objects): orjson on the dataclasses, msgspec, pydantic
  ``TypeAdapter.dump_json``, cattrs (orjson converter); ratios against the hand row.
- decode the whole record's JSON back into ``MethodCard``s (nested ``Score``, ``OtherSense``, ``Adopted``): a hand
  ``from_dict`` over ``orjson.loads`` (the baseline), msgspec (``json.decode(type=...)``, validating), pydantic
  ``validate_json``, cattrs ``loads``; each result is checked equal to the cards.

Times are best of ``--repeats`` (process CPU seconds and wall seconds; the machine is shared: compare CPU). Import
time: ``python -X importtime -c "import X"``, the module's cumulative microseconds, median of 9 fresh interpreters,
alone and after ``import radar.app.cli`` (the stdlib it shares with radar already loaded: what a command adds).
`radar --help`: a fresh interpreter each, median wall/CPU of 5 after one uncounted run; with ``--before DIR`` (an
older checkout: ``git worktree add DIR REV``) its code runs in the same rounds (the editable install's finder
removed from the child, DIR first on the module path). The load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import msgspec
import orjson

from radar.analysis.contributions.adoptions import Adopted
from radar.analysis.contributions.card import CardJson, MethodCard, OtherSense
from radar.analysis.contributions.consequence import Score
from radar.analysis.contributions.week import named_cards, rank
from radar.app.wiring import repro_presets
from radar.store import Store

LIBRARIES = ("orjson", "msgspec", "pydantic", "cattrs")
# a child that runs `radar --help` from the checkout given first (the editable install's finder removed)
HELP = """
import sys
root = sys.argv.pop(1)
sys.meta_path = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
sys.path.insert(0, root)
from radar.app.cli import main
try:
    main(["--help"])
except SystemExit:
    pass
"""


# -- the baseline: the hand-written codec the cards had (analysis/contributions/cards.py until this benchmark) ------
def hand_as_dict(c: MethodCard) -> dict[str, object]:
    s = c.consequence
    return {
        "name": c.name,
        "kind": c.kind,
        "area": c.area,
        "status": c.status,
        "introduced_by": c.introduced_by,
        "title": c.title,
        "introduced_on": c.introduced_on,
        "week": c.week,
        "changes": c.changes,
        "builds_on": list(c.builds_on),
        "also": list(c.also),
        "code": list(c.code),
        "uses": len(c.used_by),
        "compares": len(c.compared_by),
        "used_by": list(c.used_by),
        "compared_by": list(c.compared_by),
        "first_seen": c.first_seen,
        "first_id": c.first_id,
        "preset": c.preset or None,
        "preset_title": c.preset_title or None,
        "plugin_point": c.plugin_point,
        "score": round(c.score, 3),
        "prior_mentions": c.prior_mentions,
        "expansion": c.expansion,
        "other_senses": [
            {
                "expansion": o.expansion,
                "papers": o.papers,
                "introduced_by": o.introduced_by,
                "introduced_on": o.introduced_on,
                "what": o.what,
            }
            for o in c.other_senses
        ],
        "adopted": [
            {"framework": a.framework, "date": a.date, "link": a.link, "kind": a.kind, "text": a.text}
            for a in c.adopted
        ],
        "named": c.named,
        "consequence": {
            "score": round(s.score, 4),
            "day0": round(s.day0, 4),
            "early_uses": s.early_uses,
            "evidence": list(s.evidence),
            "version": s.version,
        },
    }


def hand_record(c: MethodCard) -> dict[str, object]:
    """The whole record by hand (every field): what a hand codec writes to store a card."""
    return {
        **{f: getattr(c, f) for f in MethodCard.__dataclass_fields__ if f not in ("other_senses", "adopted")},
        "other_senses": [_fields(o) for o in c.other_senses],
        "adopted": [_fields(a) for a in c.adopted],
        "consequence": _fields(c.consequence),
    }


def _fields(obj: object) -> dict[str, object]:
    return {f: getattr(obj, f) for f in obj.__dataclass_fields__}  # type: ignore[attr-defined]


def hand_from_dict(d: dict[str, object]) -> MethodCard:  # noqa: C901 (a hand codec is one line per field)
    s = d["consequence"]
    assert isinstance(s, dict)
    senses = d["other_senses"]
    adopted = d["adopted"]
    assert isinstance(senses, list) and isinstance(adopted, list)
    return MethodCard(
        name=str(d["name"]),
        kind=str(d["kind"]),
        area=str(d["area"]),
        status=str(d["status"]),
        introduced_by=None if d["introduced_by"] is None else str(d["introduced_by"]),
        title=str(d["title"]),
        introduced_on=str(d["introduced_on"]),
        week=str(d["week"]),
        code=tuple(str(x) for x in d["code"]),  # type: ignore[attr-defined]
        changes=str(d["changes"]),
        builds_on=tuple(str(x) for x in d["builds_on"]),  # type: ignore[attr-defined]
        also=tuple(str(x) for x in d["also"]),  # type: ignore[attr-defined]
        used_by=tuple(str(x) for x in d["used_by"]),  # type: ignore[attr-defined]
        compared_by=tuple(str(x) for x in d["compared_by"]),  # type: ignore[attr-defined]
        first_seen=str(d["first_seen"]),
        first_id=str(d["first_id"]),
        preset=str(d["preset"]),
        preset_title=str(d["preset_title"]),
        score=float(d["score"]),  # type: ignore[arg-type]
        prior_mentions=int(d["prior_mentions"]),  # type: ignore[call-overload]
        expansion=str(d["expansion"]),
        other_senses=tuple(
            OtherSense(
                str(o["expansion"]),
                int(o["papers"]),
                None if o["introduced_by"] is None else str(o["introduced_by"]),
                str(o["introduced_on"]),
                str(o["what"]),
            )
            for o in senses
        ),
        in_use_at_start=bool(d["in_use_at_start"]),
        plugin_point=str(d["plugin_point"]),
        adopted=tuple(Adopted(**{k: str(v) for k, v in a.items()}) for a in adopted),
        named=bool(d["named"]),
        early_uses=int(d["early_uses"]),  # type: ignore[call-overload]
        consequence=Score(
            float(s["score"]),
            float(s["day0"]),
            int(s["early_uses"]),
            tuple(str(x) for x in s["evidence"]),
            str(s["version"]),
            tuple(str(x) for x in s["day0_evidence"]),
        ),
    )


# -- timing --------------------------------------------------------------------------------------------------------
def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def best(fn: Callable[[], object], repeats: int) -> tuple[float, float, object]:
    """(CPU s, wall s, result) of the best of ``repeats`` runs (by CPU)."""
    runs = []
    out: object = None
    for _ in range(repeats):
        c0, w0 = cpu(), time.perf_counter()
        out = fn()
        runs.append((cpu() - c0, time.perf_counter() - w0))
    c, w = min(runs)
    return c, w, out


def import_us(module: str, prelude: str = "", runs: int = 9) -> float:
    """Median cumulative import time of ``module`` in a fresh interpreter (``-X importtime``), microseconds; after
    ``prelude`` (what is imported already is not counted again)."""
    found = []
    for _ in range(runs + 1):  # the first run writes the bytecode cache: not counted
        out = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", f"{prelude}import {module}"],
            capture_output=True,
            text=True,
            check=True,
        )
        cumulative = [
            int(m.group(1))
            for m in re.finditer(r"import time:\s+\d+ \|\s+(\d+) \| (\S+)", out.stderr)
            if m.group(2) == module
        ]
        if not cumulative and prelude:  # imported by the prelude already: it adds nothing
            return 0.0
        found.append(cumulative[-1])
    return statistics.median(found[1:])


def startup(checkouts: Sequence[tuple[str, Path]], runs: int = 5) -> dict[str, tuple[float, float]]:
    """Median wall and CPU seconds of `radar --help` per checkout, fresh interpreters, the checkouts in turn."""
    times: dict[str, list[tuple[float, float]]] = {label: [] for label, _ in checkouts}
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for i in range(runs + 1):
        for label, root in checkouts:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            w0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", HELP, str(root)], env=env, capture_output=True, check=True)
            wall = time.perf_counter() - w0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if i:  # the first round is not counted
                cpu_s = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                times[label].append((wall, cpu_s))
    return {
        label: (statistics.median(w for w, _ in rows), statistics.median(c for _, c in rows))
        for label, rows in times.items()
    }


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _row(name: str, c: float, w: float, base: float, note: str = "") -> str:
    return f"| {name} | {c:.3f} | {w:.3f} | {c / base:.2f} | {note} |"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workspace", type=Path, required=True, help="a workspace (opened for writing: use a copy)")
    ap.add_argument("--repeats", type=int, default=3, help="runs per codec; the best (by CPU) is shown")
    ap.add_argument("--limit", type=int, default=0, help="only the first N cards (0: all)")
    ap.add_argument("--before", type=Path, metavar="DIR", help="an older checkout whose `radar --help` is timed too")
    args = ap.parse_args(argv)
    print(f"load average before: {_load()}")

    t0, c0 = time.perf_counter(), cpu()
    with Store(args.workspace / "radar.db") as store:
        cards = rank(store, named_cards(store, "", "", repro_presets()))
    if args.limit:
        cards = cards[: args.limit]
    print(
        f"{len(cards):,} cards of {args.workspace} built in {cpu() - c0:.1f} CPU s ({time.perf_counter() - t0:.1f} s)"
    )

    rows: list[str] = []
    r = args.repeats
    # the JSON `radar methods --json` prints
    hc, hw, hand = best(lambda: orjson.dumps([hand_as_dict(c) for c in cards]), r)
    mc, mw, view = best(lambda: msgspec.json.encode([CardJson.of(c) for c in cards]), r)
    assert isinstance(hand, bytes) and isinstance(view, bytes) and orjson.loads(hand) == orjson.loads(view)
    rows += [
        "| encode, the `--json` view | CPU s | wall s | CPU vs hand | |",
        "|---|---|---|---|---|",
        _row("hand `as_dict` + orjson (before)", hc, hw, hc, f"{len(hand) / 1e6:.1f} MB"),
        _row("msgspec: `CardJson.of` + `json.encode` (now)", mc, mw, hc, "the same JSON (checked)"),
        "",
    ]

    # the whole record
    encoders: list[tuple[str, Callable[[], bytes]]] = [
        ("hand record dict + orjson", lambda: orjson.dumps([hand_record(c) for c in cards])),
        ("orjson on the dataclasses", lambda: orjson.dumps(cards)),
        ("msgspec `json.encode`", lambda: msgspec.json.encode(cards)),
    ]
    decoders: list[tuple[str, Callable[[bytes], list[MethodCard]]]] = [
        ("hand `from_dict` over `orjson.loads`", lambda b: [hand_from_dict(d) for d in orjson.loads(b)]),
        ("msgspec `json.decode(type=list[MethodCard])`", lambda b: msgspec.json.decode(b, type=list[MethodCard])),
    ]
    try:
        from pydantic import TypeAdapter

        adapter = TypeAdapter(list[MethodCard])
        encoders.append(("pydantic `TypeAdapter.dump_json`", lambda: adapter.dump_json(cards)))
        decoders.append(("pydantic `TypeAdapter.validate_json`", adapter.validate_json))
    except ImportError:
        print("pydantic is not installed: its rows are skipped")
    try:
        from cattrs.preconf.orjson import make_converter

        conv = make_converter()
        encoders.append(("cattrs (orjson converter) `dumps`", lambda: conv.dumps(cards)))
        decoders.append(("cattrs (orjson converter) `loads`", lambda b: conv.loads(b, list[MethodCard])))
    except ImportError:
        print("cattrs is not installed: its rows are skipped")

    rows += ["| encode, the whole record | CPU s | wall s | CPU vs hand | |", "|---|---|---|---|---|"]
    base = 0.0
    record = b""
    for name, enc in encoders:
        c, w, out = best(enc, r)
        assert isinstance(out, bytes)
        base = base or c
        if name.startswith("msgspec"):
            record = out
        rows.append(_row(name, c, w, base, f"{len(out) / 1e6:.1f} MB"))
    rows += [
        "",
        "| decode the record's JSON into `MethodCard`s | CPU s | wall s | CPU vs hand | |",
        "|---|---|---|---|---|",
    ]
    base = 0.0
    for name, dec in decoders:
        c, w, out = best(lambda dec=dec: dec(record), r)  # type: ignore[misc]
        assert out == cards, f"{name} decoded other cards"
        base = base or c
        rows.append(_row(name, c, w, base, "equal to the cards (checked)"))

    rows += [
        "",
        "| import (fresh interpreter, `-X importtime`, median of 9) | alone ms | after `radar.app.cli` ms | | |",
        "|---|---|---|---|---|",
    ]
    for lib in LIBRARIES:
        try:
            alone, after = import_us(lib), import_us(lib, "import radar.app.cli; ")
            rows.append(f"| `import {lib}` | {alone / 1000:.1f} | {after / 1000:.1f} | | |")
        except (subprocess.CalledProcessError, IndexError):
            rows.append(f"| `import {lib}` | not installed | | | |")

    checkouts = [("this checkout", ROOT)] + ([("--before", args.before.resolve())] if args.before else [])
    found = startup(checkouts)
    rows += [
        "",
        "| `radar --help` (fresh interpreter, median of 5) | CPU s | wall s | CPU vs this | |",
        "|---|---|---|---|---|",
    ]
    here = found["this checkout"][1]
    for label, (w, c) in found.items():
        rows.append(_row(label, c, w, here, str(dict(checkouts)[label])))

    print("\n".join(rows))
    print(f"load average after: {_load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
