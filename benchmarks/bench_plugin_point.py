"""How well analysis/contributions/plugin_point.py names the plug-in point of RL post-training methods.

    python benchmarks/bench_plugin_point.py [--corpus FILE] [--labels FILE] [--card-input] [--json]

The labels (benchmarks/data/plugin_points.jsonl) are 66 RL post-training papers of the full corpus, labelled by hand
from their abstracts with the point their method changes (advantage, ratio/loss, batch) or "" (reward design,
environments, applications, changes of generation); written before the classifier was measured. The classifier
reads each paper's title and abstract; ``--card-input`` gives it what a method card holds instead: the title and
the card's "changes" line (analysis.contributions.find.changes_line of the name the title starts with), no abstract.
Prints accuracy, per-point precision and recall, the confusions, and a plain baseline: the most frequent label.
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections import Counter
from pathlib import Path

from radar.analysis.contributions.extract import title_prefix
from radar.analysis.contributions.find import changes_line
from radar.analysis.contributions.plugin_point import POINTS, plugin_point

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "data" / "arxiv_corpus_full.jsonl.gz"
LABELS = ROOT / "benchmarks" / "data" / "plugin_points.jsonl"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=CORPUS, help="the full corpus (JSONL, gzip)")
    ap.add_argument("--labels", type=Path, default=LABELS, help="the hand labels (JSONL: id, point, why)")
    ap.add_argument("--card-input", action="store_true", help="title and the card's changes line, no abstract")
    ap.add_argument("--json", action="store_true", help="one JSON document")
    args = ap.parse_args(argv)
    labels = {r["id"]: r for r in map(json.loads, args.labels.read_text().splitlines()) if r}
    papers = {}
    with gzip.open(args.corpus, "rt", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r["id"] in labels:
                papers[r["id"]] = r
    missing = sorted(set(labels) - set(papers))

    def guess(p: dict[str, str]) -> str:
        if args.card_input:
            line = changes_line(p["title"], p["abstract"], title_prefix(p["title"]))
            return plugin_point(p["title"], "", line)
        return plugin_point(p["title"], p["abstract"])

    pairs = [(labels[i]["point"], guess(p)) for i, p in papers.items()]
    n = len(pairs)
    accuracy = sum(t == g for t, g in pairs) / n
    majority = Counter(t for t, _ in pairs).most_common(1)[0]
    per = {}
    for point in (*POINTS, ""):
        tp = sum(t == g == point for t, g in pairs)
        guessed = sum(g == point for _, g in pairs)
        true = sum(t == point for t, _ in pairs)
        per[point or "(none)"] = {
            "labelled": true,
            "precision": round(tp / guessed, 3) if guessed else None,
            "recall": round(tp / true, 3) if true else None,
        }
    confusions = Counter(f"{t or '(none)'} -> {g or '(none)'}" for t, g in pairs if t != g)
    out = {
        "input": "title + changes line" if args.card_input else "title + abstract",
        "papers": n,
        "missing": missing,
        "accuracy": round(accuracy, 3),
        "baseline_majority": {"label": majority[0] or "(none)", "accuracy": round(majority[1] / n, 3)},
        "per_point": per,
        "confusions": dict(confusions.most_common()),
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{n} hand-labelled papers ({len(missing)} not in the corpus); input: {out['input']}")
    print(
        f"accuracy {out['accuracy']:.3f}  (most frequent label '{out['baseline_majority']['label']}': "
        f"{out['baseline_majority']['accuracy']:.3f})"
    )
    print(f"{'point':<12} {'labelled':>8} {'precision':>9} {'recall':>7}")
    for point, row in per.items():
        prec = "-" if row["precision"] is None else f"{row['precision']:.3f}"
        rec = "-" if row["recall"] is None else f"{row['recall']:.3f}"
        print(f"{point:<12} {row['labelled']:>8} {prec:>9} {rec:>7}")
    for pair, count in confusions.most_common():
        print(f"  {count} x {pair}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
