"""The worker process of one run: ``python -m radar.repro.worker --db WORKSPACE/radar.db RUN_ID``.

Started by ``repro.supervise.start``; its stdout/stderr are the run's log.txt; the work is
``repro.execute.execute``. Exit codes: 0 done or cancelled, 1 failed (the run record says why).
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m radar.repro.worker", description=__doc__)
    parser.add_argument("--db", required=True, help="the workspace database (the run record names its folder)")
    parser.add_argument("run_id")
    args = parser.parse_args(argv)

    from pathlib import Path

    from radar.repro.execute import execute

    def log(msg: str) -> None:
        print(msg, flush=True)

    try:
        run = execute(Path(args.db), args.run_id, log=log)
    except BaseException:  # already recorded as failed, traceback in the log
        return 1
    return 0 if run.status in ("done", "cancelled") else 1


if __name__ == "__main__":
    sys.exit(main())
