"""What the product prints, saved and compared: a refactor's check that behaviour did not change.

    .venv/bin/python benchmarks/golden_outputs.py --save DIR      [--workspace WS] [--no-repro]
    .venv/bin/python benchmarks/golden_outputs.py --compare DIR   [--workspace WS] [--no-repro]

Builds a workspace from the bundled snapshot as `make demo` does (`radar demo --no-app` into WS, a temporary
folder by default), then runs, each in a fresh process of the `radar` next to this interpreter, the commands of
``COMMANDS`` (stats, two searches, similar, trends by month and week, methods in four forms and as text, report,
people list, repro methods/list/show after one short toy run, doctor, and last a crawl of the demo's local feeds
again) and reads the report the demo wrote (Markdown, HTML and JSON). Not covered: digest and alerts (the demo has
no people), index, tag eval/fix. Use a fresh workspace for each side (the default): a workspace reused with a run in
it gets no second toy run, so its repro outputs differ from a fresh one's.
HTML). Each output is normalised for what legitimately differs between two runs (timestamps, durations, the
workspace's path, run ids, the demo's timings) and written to DIR/<name>.txt (``--save``) or compared with DIR
(``--compare``: a table of same/different, the first differing lines of each, exit 1 when any differs).

To check a branch against its base: a checkout of the base with its own venv (``git worktree add /tmp/base <rev>``,
``make -C /tmp/base setup``), this script copied into it and run there (``cd /tmp/base &&
.venv/bin/python benchmarks/golden_outputs.py --save /tmp/golden-base``), then ``--compare /tmp/golden-base`` from
the branch. (Another checkout's code on ``PYTHONPATH`` does not work: each command runs the ``radar`` its
interpreter has installed.) Run ``--save`` twice on the same code first if in doubt: a difference there is noise
this script should normalise (say so, and add the pattern).
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RADAR = [sys.executable, "-m", "radar.app.cli"]
WEEK = "2025-W39"  # the demo's report week (its --as-of 2025-09-30)

# (name, argv after `radar --workspace WS`); "{run}" is the id of the toy run, "{doc}" the first search hit
COMMANDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("stats", ("stats", "--json")),
    ("search-grpo", ("search", "group relative policy optimization variance", "-k", "10", "--json")),
    (
        "search-kv-since",
        ("search", "KV cache memory management for LLM serving", "-k", "5", "--since", "2025-06-01", "--json"),
    ),
    ("similar", ("similar", "{doc}", "-k", "5", "--json")),
    ("trends-month", ("trends", "--as-of", "2025-09-30", "--window", "month", "--json")),
    ("trends-week", ("trends", "--as-of", "2025-09-30", "--window", "week", "--json")),
    ("methods", ("methods", "--json")),
    ("methods-kind-since", ("methods", "--kind", "method", "--since", "2025-09-01", "--json")),
    ("methods-week", ("methods", "--week", WEEK, "--json")),
    ("methods-week-text", ("methods", "--week", WEEK)),
    ("methods-name-spark", ("methods", "--name", "SPARK", "--json")),
    ("methods-name-grpo", ("methods", "--name", "GRPO", "--json")),
    ("report-json", ("report", "--week", WEEK, "--json")),
    ("people-list", ("people", "list", "--json")),
    ("repro-methods", ("repro", "methods", "--json")),
    ("repro-list", ("repro", "list", "--json")),
    ("repro-show", ("repro", "show", "{run}", "--json")),
    ("doctor", ("doctor", "--json")),
    ("crawl-again", ("crawl", "--json")),  # last: it writes the crawl state (the local feeds again, nothing new)
)
TOY_RUN = ("repro", "run", "--method", "dapo", "--seeds", "1", "--steps", "2", "--json")

_NOISE = (
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2}| UTC)?"), "<TIME>"),
    (re.compile(r"\b\d+(?:\.\d+)? ?(?:s|ms|CPU-s)\b(?= |\)|,|$)"), "<S>"),
    (re.compile(r"\b[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}\b"), "<UUID>"),
)


# a reproduction's timings and memory (the accuracies and mechanism rates of a seeded CPU run are deterministic)
_TIMING_KEY = re.compile(
    r"(?:_s|_gb|_mb|seconds|_per_s_wall|_ratio|_ratio_per_pair|_ratio_range|_diff_range|_s_median)$"
)
_EFFICIENCY = re.compile(r"Efficiency \((\w+)\): [^\n\"]*?\(peak RSS \(VmHWM\)\)\.")


def _timings(value: object, key: str = "") -> object:
    if isinstance(value, dict):
        return {k: _timings(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_timings(v, key) for v in value]
    if _TIMING_KEY.search(key) and isinstance(value, int | float) and not isinstance(value, bool):
        return "<N>"
    if isinstance(value, str) and value.endswith("(peak RSS (VmHWM))"):  # the efficiency line, from the timings
        return "<EFFICIENCY>"
    return value


def normalise(text: str, ws: Path, run_id: str) -> str:
    for path in {str(ws.resolve()), str(ws)}:
        text = text.replace(path, "<WS>").replace(path.replace("_", "\\_"), "<WS>")  # Markdown escapes _
    if run_id:
        text = text.replace(run_id, "<RUN>")
    head, _, body = text.partition("\n") if text.startswith("exit ") else ("", "", text)
    if body.lstrip()[:1] in ("{", "["):
        try:  # a JSON document: its timings by key, its layout as printed
            doc = json.dumps(_timings(json.loads(body)), indent=2, ensure_ascii=False)
            text = f"{head}\n{doc}" if head else doc
        except json.JSONDecodeError:
            pass
    text = _EFFICIENCY.sub(r"Efficiency (\1): <EFFICIENCY>.", text)
    for rx, sub in _NOISE:
        text = rx.sub(sub, text)
    return text


def radar(ws: Path, argv: Sequence[str], timeout: int = 900) -> tuple[int, str, str]:
    # one arm at a time: how many a toy run trains at once follows the machine's load (repro/execute.py), not the code
    env = {**os.environ, "COLUMNS": "160", "NO_COLOR": "1", "TERM": "dumb", "RADAR_REPRO_ARMS_AT_ONCE": "1"}
    done = subprocess.run(
        [*RADAR, "--workspace", str(ws), *argv], capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT
    )
    return done.returncode, done.stdout, done.stderr


def collect(ws: Path, repro: bool) -> dict[str, str]:
    """Every output, normalised, by name."""
    out: dict[str, str] = {}
    if not (ws / "radar.db").is_file():
        t0 = time.perf_counter()
        code, stdout, stderr = radar(ws, ["demo", "--no-app"], timeout=1800)
        print(f"demo workspace built in {time.perf_counter() - t0:.0f} s (exit {code})", file=sys.stderr)
        if code not in (0, 2):
            raise SystemExit(f"radar demo failed ({code}): {stderr[-2000:]}")
    run_id = ""
    if repro and not any((ws / "runs").glob("*/run.json")):  # one toy run a workspace
        code, stdout, stderr = radar(ws, TOY_RUN, timeout=1800)
        out["repro-run"] = f"exit {code}\n{stdout}"
        found = re.search(r'"(?:run_id|id)"\s*:\s*"([^"]+)"', stdout)
        run_id = found.group(1) if found else ""
    code, stdout, _ = radar(ws, COMMANDS[1][1])
    found = re.search(r'"(?:id|doc_id)"\s*:\s*"([^"]+)"', stdout)
    doc = found.group(1) if found else "2509.22611"
    for name, argv in COMMANDS:
        if "{run}" in argv and not run_id:
            continue
        code, stdout, stderr = radar(ws, [a.replace("{run}", run_id).replace("{doc}", doc) for a in argv])
        out[name] = f"exit {code}\n{stdout}" + (f"\n--- stderr\n{stderr}" if code not in (0,) else "")
    report = ws / "reports" / WEEK
    for f in sorted(report.glob("*")) if report.is_dir() else []:
        if f.suffix in (".md", ".html", ".json") and f.is_file():
            out[f"report-file-{f.name}"] = f.read_text(encoding="utf-8", errors="replace")
    return {k: normalise(v, ws, run_id) for k, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--save", type=Path, metavar="DIR", help="write the outputs here")
    mode.add_argument("--compare", type=Path, metavar="DIR", help="compare the outputs with those saved here")
    ap.add_argument("--workspace", type=Path, help="reuse or build the demo workspace here (default: a temporary one)")
    ap.add_argument("--no-repro", action="store_true", help="skip the toy reproduction run and the repro show")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="radar-golden-") as tmp:
        ws = args.workspace or Path(tmp) / "ws"
        outputs = collect(ws, repro=not args.no_repro)
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
        for name, text in outputs.items():
            (args.save / f"{name}.txt").write_text(text, encoding="utf-8")
        print(f"saved {len(outputs)} outputs to {args.save}")
        return 0
    # the saved side normalised again (idempotent): outputs saved before a rule was added compare under it
    saved = {p.stem: normalise(p.read_text(encoding="utf-8"), ws, "") for p in sorted(args.compare.glob("*.txt"))}
    differ = 0
    for name in sorted(saved.keys() | outputs.keys()):
        before, after = saved.get(name), outputs.get(name)
        if before == after:
            print(f"same       {name}")
            continue
        differ += 1
        if before is None or after is None:
            print(f"{'new' if before is None else 'missing':10s} {name}")
            continue
        print(f"DIFFERENT  {name}")
        diff = difflib.unified_diff(before.splitlines(), after.splitlines(), "saved", "now", n=1, lineterm="")
        for line in list(diff)[:24]:
            print(f"    {line[:200]}")
    print(f"{len(saved)} saved, {len(outputs)} now, {differ} different")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
