"""Build data/snapshot_contributions.jsonl.gz: what the shipped contribution model decides for every paper of the
bundled snapshot, shipped so that `radar import` (and so the demo) need not decide them again.

Imports the snapshot into a throw-away workspace, decides every paper there exactly as `radar import` does
(``update_contributions`` with the shipped model, no prebuilt rows), and writes each paper's row and mentions
with its content hash (analysis/contributions/prebuilt.py). `radar import data/snapshot.jsonl.gz` stores a
paper's prebuilt row only where the model version and the content hash still match and decides the rest.
Re-run after retraining the contribution model or changing the snapshot (a stale file is not used; a test
says so):

    .venv/bin/python data/build_contributions.py [--out PATH]

About a minute on 2 idle cores.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parent
sys.path.insert(0, str(DATA.parent))  # run from a checkout without an install too

from radar.analysis.contributions import prebuilt  # noqa: E402
from radar.analysis.contributions.model import shipped_model  # noqa: E402
from radar.analysis.contributions.table import Contributions  # noqa: E402
from radar.analysis.contributions.update import update_contributions  # noqa: E402
from radar.crawler.snapshot import import_snapshot  # noqa: E402
from radar.store import Workspace  # noqa: E402


def build(snapshot: Path, out: Path) -> int:
    model = shipped_model()
    with tempfile.TemporaryDirectory(prefix="radar-contributions-") as tmp:
        ws, _ = Workspace.init(Path(tmp) / "ws")
        with ws.store() as store:
            import_snapshot(store, snapshot)
            update_contributions(store, model)
            ids = Contributions(store).papers_without_contribution("")  # every paper (no row is by model '')
            rows = Contributions(store).contributions(ids)
            found = Contributions(store).mentions_by_paper(ids)
        papers = [(rows[i], found.get(i, [])) for i in ids]
    return prebuilt.write(out, model.version, papers)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snapshot", type=Path, default=DATA / "snapshot.jsonl.gz")
    parser.add_argument("--out", type=Path, default=None, help="default: beside the snapshot")
    args = parser.parse_args(argv)
    out = args.out or prebuilt.beside(args.snapshot)
    started = time.perf_counter()
    n = build(args.snapshot, out)
    print(f"{out}: {n:,} papers decided by {shipped_model().version} in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
