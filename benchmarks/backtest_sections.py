"""Backtest of the report's sections on the labeled weeks: what the lab's sections show first, with each paper placed
by its contribution's area (the report's ``area_of``) beside the tag fallback it replaces.

    .venv/bin/python benchmarks/backtest_sections.py [--workspace DIR]

The workspace is backtest_cards.py's: the bundled snapshot plus the shipped labeled papers, imported, embedded and
tagged (``radar import``, ``radar index``, ``radar tag``; built when DIR has none). For each labeled week W, held
out: the contributions model is fitted on the other weeks' labels only and decides every stored paper of W, then
the report's content for W is gathered (the default profile: the lab's two groups) three ways:

- tags: ``area_of`` None, the fallback on the paper's best tag and its application field (the report before);
- contribution: the area of the paper's stored contribution (what app.steps.report hands in now);
- card: the card's area instead (the model's, moved into a lab group when the paper's stored tags are in one).

Scored on the labeled papers the report shows (labels: ``area``): precision of the first 5 papers of each lab
section (their labeled area is the section's group), and of the "Overall" list (labeled area in the lab's groups);
the labeled applications elsewhere (area ``other``) the sections still show; the "elsewhere" line (its labeled
papers whose area is outside the lab's groups). Then the same over every labeled paper with a lab tag, placed as
the report places it (a larger sample than the few the sections show first).
"""

from __future__ import annotations

import argparse
import sys
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backtest_cards import build  # same folder
from rich.console import Console
from rich.table import Table

from radar.analysis.contributions.cards import cards_of, parse_week
from radar.analysis.contributions.labels import LAB_AREAS, load_labeled, load_training
from radar.analysis.contributions.model import fit_shipped
from radar.analysis.contributions.table import Contributions
from radar.analysis.contributions.update import decide_documents
from radar.analysis.trends.result import PeriodTrends
from radar.app import steps_contributions, wiring
from radar.app.context import Radar
from radar.app.steps import contribution_areas
from radar.crawler.documents import Documents
from radar.index.tags_table import Tags
from radar.reports.config import ReportConfig
from radar.reports.content import ReportInputs, gather, tag_groups
from radar.reports.period import parse_week as report_week
from radar.reports.sections import place
from radar.reports.summarize import ExtractiveSummarizer
from radar.store import Workspace

console = Console(width=200)
FIRST = 5


def ratio(n: int, d: int) -> str:
    return f"{n / d:.3f} ({n}/{d})" if d else "-"


def score(content: dict[str, Any], labels: dict[str, Any], groups: dict[str, str]) -> dict[str, tuple[int, int]]:
    lab_sections = [s for s in content["top_papers"] if groups.get(s["tag"]) in LAB_AREAS]
    shown = [(p["id"], groups[s["tag"]]) for s in lab_sections for p in s["papers"]]
    first = [(p["id"], groups[s["tag"]]) for s in lab_sections for p in s["papers"][:FIRST]]
    overall = [p["id"] for p in content["top_overall"]]
    elsewhere = [p["id"] for p in content["elsewhere"]]
    labeled = [(i, g) for i, g in shown if i in labels]
    out = {
        f"first {FIRST} per section": (
            sum(labels[i].area == g for i, g in first if i in labels),
            sum(i in labels for i, _ in first),
        ),
        "overall in lab areas": (
            sum(labels[i].area in LAB_AREAS for i in overall if i in labels),
            sum(i in labels for i in overall),
        ),
        "applications in lab sections": (sum(labels[i].area == "other" for i, _ in labeled), len(labeled)),
        "elsewhere outside lab areas": (
            sum(labels[i].area not in LAB_AREAS for i in elsewhere if i in labels),
            sum(i in labels for i in elsewhere),
        ),
        "lab papers kept in sections": (
            sum(1 for i, _ in labeled if labels[i].area in LAB_AREAS),
            sum(1 for i in [*elsewhere, *(i for i, _ in labeled)] if i in labels and labels[i].area in LAB_AREAS),
        ),
    }
    return out


def placements(store: Any, ids: list[str], labels: dict[str, Any], groups: dict[str, str], area_of: Any) -> dict:
    """Every labeled paper of the week carrying a lab tag, placed as the report places it (all, not only those
    the sections show first)."""
    scores = Tags(store).scores(ids)
    docs = Documents(store).of(ids)
    n_lab = n_right = n_apps = n_out = n_lab_total = n_elsewhere = n_elsewhere_right = 0
    for i in ids:
        tags = scores.get(i, {})
        if i not in labels or not any(groups.get(t) in LAB_AREAS for t in tags):
            continue
        where = place(docs[i], tags, groups, area_of)
        lab_label = labels[i].area in LAB_AREAS
        n_lab_total += lab_label
        if where.section and groups.get(where.section) in LAB_AREAS:
            n_lab += 1
            n_right += labels[i].area == groups[where.section]
            n_apps += labels[i].area == "other"
        elif where.elsewhere:
            n_elsewhere += 1
            n_elsewhere_right += not lab_label
            n_out += lab_label
    return {
        "placed in lab sections: right group": (n_right, n_lab),
        "placed: applications in lab sections": (n_apps, n_lab),
        "placed: elsewhere outside lab areas": (n_elsewhere_right, n_elsewhere),
        "placed: lab papers sent elsewhere": (n_out, n_lab_total),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspace", type=Path, default=Path("/tmp/radar-backtest-sections/ws"))
    args = ap.parse_args()
    papers = load_labeled()
    training = load_training()
    if not (args.workspace / "radar.db").exists():
        build(args.workspace, papers, True)
    ws = Workspace.open(args.workspace)
    radar = Radar(ws)
    cfg = ReportConfig(top_n=FIRST)
    labels = {p.label.doc_id: p.label for p in papers}
    presets, card_groups = steps_contributions.presets(radar), steps_contributions.tag_groups(radar)
    titles = wiring.repro_catalog(radar).titles()
    totals: dict[str, dict[str, list[int]]] = {}
    with ws.store() as store:
        groups = tag_groups({t.name: t.group for t in radar.taxonomy.tags}, store)
        for week in sorted({p.label.week for p in papers}):
            model = fit_shipped([p for p in papers if p.label.week != week], training)
            period = report_week(week)
            start, end = parse_week(week)
            ids = Documents(store).matching(since=period.since, until=period.until, kinds=["paper"])
            decide_documents(store, list(Documents(store).of(ids).values()), model)
            rows = Contributions(store).contributions(ids)
            cards = {c.introduced_by: c.area for c in cards_of(store, list(rows.values()), presets, card_groups)}
            seams = {
                "tags (before)": None,
                "contribution": contribution_areas(store, period),
                "card": lambda i, rows=rows, cards=cards: cards.get(i) or (rows[i].area if i in rows else None),
            }
            for who, area_of in seams.items():
                inputs = ReportInputs(
                    period,
                    cfg,
                    radar.settings.profile,
                    trends=PeriodTrends.empty(week, start.isoformat(), end.isoformat()),
                    grouping=groups,
                    summarizer=ExtractiveSummarizer(),
                    presets=titles,
                    area_of=area_of,
                )
                content = gather(store, inputs).document()
                found = score(content, labels, groups.groups) | placements(store, ids, labels, groups.groups, area_of)
                for key, (n, d) in found.items():
                    cell = totals.setdefault(who, {}).setdefault(key, [0, 0])
                    cell[0] += n
                    cell[1] += d
                    console.print(f"{week} {who:14} {key}: {ratio(n, d)}", style="dim")
    table = Table(title=f"Report sections on the labeled weeks, held out ({date.today().isoformat()})")
    keys = list(next(iter(totals.values())))
    for col in ("area_of", *keys):
        table.add_column(col, justify="left" if col == "area_of" else "right")
    for who, figures in totals.items():
        table.add_row(who, *[ratio(*figures[k]) for k in keys])
    console.print(table)


if __name__ == "__main__":
    main()
