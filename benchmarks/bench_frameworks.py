"""Framework adoption: crawling the recorded TRL and verl feeds into the bundled snapshot's workspace, matching their
entries to the method cards, and how right the matches are.

    .venv/bin/python benchmarks/bench_frameworks.py [--corpus PATH] [--labels PATH]

Speed (CPU seconds of this process, one run; the machine is shared, so CPU rather than wall time): feedparser
reading the three recorded feeds (the plain baseline: what any feed reader pays), the framework crawl (parse, plain
text, store, both feeds of each source, file:// URLs), and matching every stored entry to the cards (a full
rematch, what `radar crawl` pays after new entries or papers).

Quality: the first entry of each framework naming each card (what a card's "adopted by" and the report's rules read),
judged by hand in ``--labels`` (tests/data/frameworks/adoption_labels.jsonl: ``correct`` is whether the framework
really took in the card's method or system there); precision over the judged pairs, and recall over the labeled
adoptions (``expected``) whose paper the corpus holds.
"""

from __future__ import annotations

import argparse
import gzip
import tempfile
import time
from pathlib import Path

import feedparser
import orjson
from rich.console import Console
from rich.table import Table
from rich.text import Text

from radar.analysis.contributions.adoptions import Adoptions
from radar.analysis.contributions.frameworks import first_adoptions, refresh_matches
from radar.analysis.contributions.update import name_key
from radar.app.cli import main as radar
from radar.app.context import Radar
from radar.app.steps import stored_names
from radar.app.steps_contributions import presets
from radar.crawler.documents import Documents
from radar.crawler.run import crawl
from radar.reports.recommend import preset_name
from radar.store import Workspace

ROOT = Path(__file__).resolve().parents[1]
FEEDS = ROOT / "tests" / "data" / "frameworks"
SOURCES = (
    ("trl", "TRL", "huggingface/trl", ("commits_main", "releases")),
    ("verl", "verl", "volcengine/verl", ("commits_main",)),
)
EMPTY = b'<feed xmlns="http://www.w3.org/2005/Atom"><title>none recorded</title></feed>'


def lay_out(folder: Path) -> list[bytes]:
    """The recorded feeds where a file:// framework url expects them; their bodies."""
    bodies = []
    for name, _, repo, recorded in SOURCES:
        base = folder / repo
        (base / "commits").mkdir(parents=True)
        (base / "releases.atom").write_bytes(EMPTY)
        for kind in recorded:
            body = gzip.decompress((FEEDS / f"{name}_{kind}.atom.gz").read_bytes())
            bodies.append(body)
            target = base / "commits" / "main.atom" if kind == "commits_main" else base / "releases.atom"
            target.write_bytes(body)
    return bodies


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT / "data" / "snapshot.jsonl.gz")
    ap.add_argument("--labels", type=Path, default=FEEDS / "adoption_labels.jsonl")
    args = ap.parse_args(argv)
    out = Console(width=160)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        bodies = lay_out(folder / "feeds")
        sources = "".join(
            f'\n[[sources]]\nname = "{n}"\ntype = "framework"\nurl = "file://{folder / "feeds" / repo}"\n'
            f'area = "rl-post-training"\nlabel = "{label}"\n'
            for n, label, repo, _ in SOURCES
        )
        ws, _ = Workspace.init(folder / "ws", config_text=sources)
        assert radar(["-w", str(ws.root), "import", str(args.corpus)]) == 0
        rad = Radar(ws)
        titles = presets(rad)
        names = [preset_name(p, titles) for p in titles]
        with ws.store() as store:
            stored_names(store)  # the names table (its kinds keep models and orgs out), as trends leaves it
            refresh_matches(store, names)
            c0 = time.process_time()
            for body in bodies:
                feedparser.parse(body)
            parse_s = time.process_time() - c0
            c0 = time.process_time()
            results = crawl(store, rad.settings.crawler)
            crawl_s = time.process_time() - c0
            c0 = time.process_time()
            matched = refresh_matches(store, names) or 0
            match_s = time.process_time() - c0
            entries = sum(r.added for r in results)
            keys = {m[0] for m in store.conn.execute("SELECT DISTINCT key FROM framework_matches")}
            adopted = Adoptions(store).adoptions_of(keys)
            papers = Documents(store).count()
        speed = Table(title=f"{entries} entries (TRL and verl), {papers:,} papers; CPU seconds, one run")
        for col in ("step", "CPU s", "entries/s", "vs feedparser alone"):
            speed.add_column(col, justify="left" if col == "step" else "right")
        steps = (("feedparser.parse (baseline)", parse_s), ("crawl: parse + store", crawl_s), ("match", match_s))
        for step, secs in steps:
            speed.add_row(step, f"{secs:.2f}", f"{entries / secs:,.0f}", f"{secs / parse_s:.2f}x")
        out.print(speed)
        out.print(f"{matched} matches stored")
        labels = [orjson.loads(line) for line in args.labels.read_text().splitlines() if line.strip()]
        judged = {(name_key(r["name"]), r["framework"]): r for r in labels if "correct" in r}
        pairs = Table(title="First entry of each framework naming each card")
        for col in ("card", "framework", "date", "entry", "judged"):
            pairs.add_column(col)
        found: set[tuple[str, str]] = set()
        right = wrong = 0
        for key in sorted(adopted):
            for framework, first in first_adoptions(adopted[key]).items():
                name = judged.get((key, framework), {}).get("name", key)
                found.add((key, framework))
                verdict = judged.get((key, framework), {}).get("correct")
                right += verdict is True
                wrong += verdict is False
                mark = {True: "right", False: "wrong", None: "unjudged"}[verdict]
                pairs.add_row(*(Text(v) for v in (name, framework, first.date, first.text[:90], mark)))
        out.print(pairs)
        expected = [r for r in labels if r.get("expected") and r.get("in_corpus", True)]
        hit = [r for r in expected if (name_key(r["name"]), r["framework"]) in found]
        missed = [f"{r['name']} in {r['framework']} ({r.get('why', '')})" for r in expected if r not in hit]
        summary = (
            f"precision {right}/{right + wrong} = {right / max(1, right + wrong):.2f} over judged pairs "
            f"({len(found) - right - wrong} unjudged); recall {len(hit)}/{len(expected)} = "
            f"{len(hit) / max(1, len(expected)):.2f} of the labeled adoptions; missed: {', '.join(missed) or '-'}"
        )
        out.print(Text(summary))


if __name__ == "__main__":
    main()
