"""Backtest of the method cards on the labeled weeks: what `radar methods --week W` lists, scored against the
introduction labels, beside the rule baseline and the names-based "new methods" it replaces.

    .venv/bin/python benchmarks/backtest_cards.py [--tag] [--workspace DIR]

The workspace is the bundled snapshot plus the shipped labeled papers (``radar import`` of both, as a lab would
build it; ``--tag`` also runs ``radar index`` and ``radar tag``, so stored tags can place a paper in the lab's
areas). For each labeled week W, held out: the model is fitted on the other weeks' labels only, decides every
stored paper of week W (labeled or not), and ``week_cards(store, W)`` lists the cards. On the labeled papers:

- lead recall: of the introductions a lead should see (method or system in the lab's areas, flagged), the share
  with a card of the labeled name (and with a card at all);
- card precision: of the cards whose paper is labeled, the share that really introduce the labeled name; also
  for the first 20 such cards in list order (what a reader sees first); kind agreement of those cards;
- weeks to the report: for each lead introduction, the weeks from its paper's week to the first week listing
  it. Cards list it in its own week or never; the names-based detector (a name is seen once 3 stored papers
  name it: ``find_names(min_docs=3)``, the old trends' "new methods") lists it the week its third paper appears.
The rule baseline: title prefix / "we propose X" names, keyword kinds, listed without the model.

First, per field, the leave-one-week-out cross-validation of the model beside the rules on the labeled papers
alone (``radar.analysis.contributions.evaluate.report``; no workspace).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import msgspec
import orjson
from rich.console import Console
from rich.table import Table

from radar.analysis.contributions.cards import MethodCard, iso_week, parse_week
from radar.analysis.contributions.evaluate import lead_target, report
from radar.analysis.contributions.labels import LabeledPaper, load_labeled, load_training
from radar.analysis.contributions.model import fit_shipped
from radar.analysis.contributions.rules import rule_decision
from radar.analysis.contributions.table import Contributions
from radar.analysis.contributions.update import decide_documents, name_key
from radar.analysis.contributions.week import week_cards
from radar.app.cli import main as radar
from radar.app.wiring import repro_presets
from radar.crawler.documents import Documents
from radar.store import Store

console = Console(width=120)
MIN_DOCS = 3  # the names stage's threshold for a name to be seen at all


def build(root: Path, papers: Sequence[LabeledPaper], tag: bool) -> None:
    root.parent.mkdir(parents=True, exist_ok=True)
    labeled = root.parent / "labeled.jsonl"
    with labeled.open("wb") as fh:
        for p in papers:
            row = {"id": p.label.doc_id, "title": p.title, "abstract": p.abstract, "categories": list(p.categories)}
            fh.write(orjson.dumps({**row, "published": p.published, "authors": []}) + b"\n")
    steps = [["init"], ["import", str(ROOT / "data/snapshot.jsonl.gz")], ["import", str(labeled)]]
    if tag:
        steps += [["index"], ["tag"]]
    for argv in steps:
        if radar(["-w", str(root), *argv]) != 0:
            raise SystemExit(f"radar {' '.join(argv)} failed")


def _ratio(n: int, d: int) -> float | None:
    return round(n / d, 3) if d else None


def _show(figures: dict[str, tuple[int, int]], key: str) -> str:
    return str(_ratio(*figures[key]))


def score(listed: list[tuple[str, str, str, str]], papers: Sequence[LabeledPaper]) -> dict[str, tuple[int, int]]:
    """(numerator, denominator) of each figure; ``listed``: (paper id, name, kind, area) in list order."""
    labels = {p.label.doc_id: p.label for p in papers}
    mine = [(i, n, k, a) for i, n, k, a in listed if i in labels]
    right = [labels[i].introduces and n == labels[i].name for i, n, _, _ in mine]
    lenient = [
        labels[i].introduces and n.lower() in {labels[i].name.lower(), *(a.lower() for a in labels[i].also)}
        for i, n, _, _ in mine
    ]
    kinds = [k == labels[i].kind for i, _, k, _ in mine if labels[i].introduces]
    areas = [a == labels[i].area for i, _, _, a in mine]
    by_id = {i: n for i, n, _, _ in mine}
    lead = [p.label for p in papers if lead_target(p.label)]
    return {
        "lead_recall": (sum(by_id.get(lab.doc_id) == lab.name for lab in lead), len(lead)),
        "lead_listed": (sum(lab.doc_id in by_id for lab in lead), len(lead)),
        "precision": (sum(right), len(right)),
        "precision_lenient": (sum(lenient), len(lenient)),
        "precision_first_20": (sum(right[:20]), len(right[:20])),
        "kind_agreement": (sum(kinds), len(kinds)),
        "area_agreement": (sum(areas), len(areas)),
    }


def names_delay(store: Store, lead: Sequence[Any], intro_week: dict[str, str]) -> list[int | None]:
    """Weeks from introduction until the name's third stored paper (the names stage sees it), None: never."""
    keys = {lab.doc_id: name_key(lab.name) for lab in lead}
    found = Contributions(store).mentions_of(keys.values())
    out: list[int | None] = []
    for lab in lead:
        start = parse_week(intro_week[lab.doc_id])[0]
        days = [m.published for m in found.get(keys[lab.doc_id], []) if m.published >= start.isoformat()]
        if len(days) < MIN_DOCS:
            out.append(None)
            continue
        third = date.fromisoformat(days[MIN_DOCS - 1])
        out.append((parse_week(iso_week(third.isoformat()))[0] - start).days // 7)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", type=Path, help="build the workspace here (default: a temporary folder)")
    ap.add_argument("--tag", action="store_true", help="also embed and tag (stored tags then inform the area)")
    args = ap.parse_args()
    papers = load_labeled()
    training = load_training()
    cv = msgspec.to_builtins(report(papers, training))
    cv_table = Table(title=f"Contributions per field, leave-one-week-out CV on {len(papers)} labeled papers")
    for col in ("figure", "model", "rules", *(f"model {w}" for w in cv["weeks"])):
        cv_table.add_column(col, justify="left" if col == "figure" else "right")
    for key in cv["model"]:
        weeks = [str(cv["weeks"][w]["model"][key]) for w in cv["weeks"]]
        cv_table.add_row(key, str(cv["model"][key]), str(cv["rules"][key]), *weeks)
    console.print(cv_table)
    root = args.workspace or Path(tempfile.mkdtemp(prefix="radar-backtest-cards-")) / "ws"
    build(root, papers, args.tag)
    from radar.app.context import Radar
    from radar.app.steps_contributions import tag_groups
    from radar.store import Workspace

    groups = tag_groups(Radar(Workspace.open(root))) if args.tag else None
    weeks = sorted({p.label.week for p in papers})
    results: dict[str, dict[str, Any]] = {}
    delays: dict[str, list[int | None]] = {"cards": [], "rules": [], "names (3 papers)": []}
    with Store(root / "radar.db") as store:
        for week in weeks:
            held = [p for p in papers if p.label.week == week]
            model = fit_shipped([p for p in papers if p.label.week != week], training)
            start, end = parse_week(week)
            ids = Documents(store).matching(
                since=start.isoformat(), until=end.isoformat() + "T23:59:59Z", kinds=["paper"]
            )
            docs = Documents(store).of(ids)
            # a labeled paper whose arXiv id is of a later month than its date entered the record then (store.dates):
            # the week's listing cannot show it, so it counts as missed
            moved = sorted({p.label.doc_id for p in held} - docs.keys())
            if moved:
                console.print(
                    f"{week}: {len(moved)} labeled papers entered the record in a later week: {', '.join(moved)}"
                )
            decide_documents(store, list(docs.values()), model)
            cards: list[MethodCard] = week_cards(store, week, repro_presets(), groups)
            listed = [(c.introduced_by or "", c.name, c.kind, c.area) for c in cards]
            ruled = []
            for p in held:
                name, kind, area, _ = rule_decision(p.title, p.abstract)
                if name:
                    ruled.append((p.label.doc_id, name, kind, area))
            results[week] = {"cards": score(listed, held), "rules": score(ruled, held), "listed": len(cards)}
            lead = [p.label for p in held if lead_target(p.label)]
            shown = {i: n for i, n, _, _ in listed}
            ruled_names = {i: n for i, n, _, _ in ruled}
            delays["cards"] += [0 if shown.get(lab.doc_id) == lab.name else None for lab in lead]
            delays["rules"] += [0 if ruled_names.get(lab.doc_id) == lab.name else None for lab in lead]
            delays["names (3 papers)"] += names_delay(store, lead, {lab.doc_id: week for lab in lead})
    table = Table(title=f"Method cards on the labeled weeks (held out; {date.today().isoformat()})")
    cols: tuple[str, ...] = ("lead_recall", "lead_listed", "precision", "precision_lenient", "precision_first_20")
    cols += ("kind_agreement", "area_agreement")
    for col in ("week", "lister", "cards (labeled)", *cols):
        table.add_column(col, justify="left" if col in ("week", "lister") else "right")
    for week, r in results.items():
        for who in ("cards", "rules"):
            s = r[who]
            table.add_row(week, who, f"{s['precision'][1]} of {r['listed'] if who == 'cards' else '-'}",
                          *[_show(s, c) for c in cols])  # fmt: skip
    for who in ("cards", "rules"):
        pooled = {
            c: (sum(r[who][c][0] for r in results.values()), sum(r[who][c][1] for r in results.values())) for c in cols
        }
        table.add_row("all", who, str(pooled["precision"][1]), *[_show(pooled, c) for c in cols])
    console.print(table)
    delay_table = Table(title="Weeks from a lead introduction's paper to the week it is listed")
    for col in ("lister", "introductions", "listed in its week", "listed later", "median weeks (listed)", "never"):
        delay_table.add_column(col, justify="left" if col == "lister" else "right")
    for who, ds in delays.items():
        got = [d for d in ds if d is not None]
        delay_table.add_row(
            who,
            str(len(ds)),
            str(sum(d == 0 for d in got)),
            str(sum(d > 0 for d in got)),
            f"{statistics.median(got):.0f}" if got else "-",
            str(len(ds) - len(got)),
        )
    console.print(delay_table)
    console.print(f"workspace: {root}")


if __name__ == "__main__":
    main()
