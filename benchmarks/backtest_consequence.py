"""Backtest of the consequence ranking (`radar methods --week W`'s order) with a time split, beside plain baselines.

    .venv/bin/python benchmarks/backtest_consequence.py --workspace DIR [--cache FILE] [--lead-c 0.1 ...]

DIR: a workspace of the full corpus as `radar import`, `radar index` and `radar tag` leave it. Every card of every
week is built as the listing builds it (``consequence_fit.examples``); then, for each positive set, each measured
week's cards are ranked by a model fitted only on introductions before that week (before the half-year, for the
adopted list), and scored where the positives land:

- lead: the six labeled weeks (introductions_dev, introductions_dev2; each measured with a model fitted on the
  labeled weeks before it, so the first week is training only): of the week's cards whose papers are labeled, the
  share of `lead_should_see` in the first 10, R-precision, and nDCG with the graded priority where it exists;
- adopted: adopted_dev's introductions of the second half of 2024 (a model fitted on the cards and adopted
  introductions of the first half only): listed as a card of their week, share in the first 5 and 10 of the whole
  week's list, median position;
- uptake: cards of 2025-02 .. 2026-01 that 3 or more later papers of their sense name in weeks 5-26 after their
  introduction (what the corpus itself took up; the first four weeks are the model's early term, left out so it
  cannot leak), each quarter ranked by a model fitted before it: share in the first 10 of their week, median
  position.

Beside three orders in the same run: today's order (lab areas first, methods and systems, the extractor's
confidence), the plain "lab areas first, then builds on a central method of the lab's stack, then has code", and
a plain logistic regression on the words of the title and abstract fitted on the same examples (the literature's
baseline). The adopted and uptake figures are also given with the early term (the card's first four weeks of
uptake, what a card weeks old has).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console
from rich.table import Table

from radar.analysis.contributions.cards import KIND_ORDER, MethodCard
from radar.analysis.contributions.consequence import ConsequenceModel, shipped_consequence
from radar.analysis.contributions.consequence_fit import (
    ADOPT_C,
    ADOPT_WEIGHT,
    EARLY_WEIGHT,
    LEAD_C,
    MUST_WEIGHT,
    UNNAMED_PENALTY,
    Example,
    Lead,
    examples,
    fit_model,
    load_adopted,
    load_leads,
    ndcg,
    positions,
)
from radar.analysis.contributions.labels import LAB_AREAS
from radar.analysis.contributions.linear import fit
from radar.analysis.contributions.signals import stack_of
from radar.analysis.contributions.week import MAX_UNNAMED, UNNAMED_LEAD
from radar.crawler.documents import Documents
from radar.store import Store
from radar.store.dates import week_monday

console = Console(width=140)
Order = Callable[[Sequence[Example]], list[Example]]
UPTAKE_MIN = 3  # later papers (weeks 5-26) that make a card "taken up"
UPTAKE_FROM, UPTAKE_TO = 29, 182  # days after the introduction


def today_order(exs: Sequence[Example]) -> list[Example]:
    """The order before the ranking: lab areas first, then methods and systems, then the extractor's confidence."""
    exs = [e for e in exs if e.card.named]

    def key(e: Example) -> tuple[object, ...]:
        c = e.card
        kind = KIND_ORDER.index(c.kind) if c.kind in KIND_ORDER else len(KIND_ORDER)
        return (c.area not in LAB_AREAS, kind, -c.score, c.name.lower())

    return sorted(exs, key=key)


def plain_order(exs: Sequence[Example]) -> list[Example]:
    """Lab areas first, then builds on a central method of the lab's stack, then has code."""
    exs = [e for e in exs if e.card.named]

    def key(e: Example) -> tuple[object, ...]:
        c = e.card
        central = bool(stack_of(" ".join(c.builds_on).lower())) or any(f.startswith("stack:") for f in e.features)
        return (c.area not in LAB_AREAS, not central, not c.code, -c.score, c.name.lower())

    return sorted(exs, key=key)


def model_order(model: ConsequenceModel, early: bool = False, check: bool = True) -> Order:
    def order(exs: Sequence[Example]) -> list[Example]:
        # the time split, checked: the model read only introductions before ``fitted_before``, and every card it
        # ranks here came on or after that day
        assert not check or all(e.day >= model.fitted_before for e in exs), "a measured card predates the model"

        def key(e: Example) -> tuple[object, ...]:
            return (-model.logit(e.features, e.card.early_uses if early else 0), e.name.lower())

        return listed(sorted(exs, key=key), model)

    return order


def words_order(train: Sequence[Example]) -> Order:
    """A plain logistic regression on the title's and abstract's words, fitted on the same lead examples."""
    rows = [frozenset(f for f in e.features if f.startswith("w:")) for e in train if e.lead is not None]
    ys = ["yes" if e.lead else "no" for e in train if e.lead is not None]
    m = fit(rows, ys, c=1.0, class_weight="balanced")

    def order(exs: Sequence[Example]) -> list[Example]:
        named = [e for e in exs if e.card.named]
        return sorted(named, key=lambda e: (-m.probability(f for f in e.features if f.startswith("w:")), e.name))

    return order


def listed(order: list[Example], model: ConsequenceModel | None) -> list[Example]:
    """What the listing shows of a ranked week: every named card, and the unnamed ones the lead model rates at
    least ``UNNAMED_LEAD``, the ``MAX_UNNAMED`` it rates highest (as ``week._unnamed_cards`` chooses them), each
    where the order puts it; an order without a model shows no unnamed card. (The examples hold unnamed cards only
    for labeled and adopted papers, so the choice is among those.)"""
    if model is None:
        return [e for e in order if e.card.named]
    rated = [(model.lead.probability(e.features), i) for i, e in enumerate(order) if not e.card.named]
    chosen = {i for p, i in sorted((-p, i) for p, i in rated if p >= UNNAMED_LEAD)[:MAX_UNNAMED]}
    return [e for i, e in enumerate(order) if e.card.named or i in chosen]


def _others(exs: Sequence[Example], before: str) -> list[Example]:
    """The examples of every week but the one starting on ``before`` (leave-one-week-out)."""
    week = next((e.week for e in exs if e.day >= before), "")
    return [e for e in exs if e.week != week]


def by_week(exs: Sequence[Example]) -> dict[str, list[Example]]:
    out: dict[str, list[Example]] = defaultdict(list)
    for e in exs:
        out[e.week].append(e)
    return out


def monday(week: str) -> str:
    day = week_monday(week)
    return day.isoformat() if day else ""


# -- lead weeks -------------------------------------------------------------------------------------------
def lead_figures(order: list[Example], labels: dict[str, Lead]) -> tuple[float, float, float]:
    """Of a ranked week's cards whose papers are labeled (each paper once, at its first card): the share flagged
    `lead_should_see` among the first 10, R-precision, and nDCG@10 with the priority as gain where the labels grade
    it (else 2 for a flagged paper)."""
    seen: set[str] = set()
    firsts = []
    for e in order:
        if e.doc_id in labels and e.doc_id not in seen:
            seen.add(e.doc_id)
            firsts.append(labels[e.doc_id])
    y = [flagged(x) for x in firsts]
    r = sum(y)
    p10 = sum(y[:10]) / min(10, len(y)) if y else 0.0
    rp = sum(y[:r]) / r if r else 0.0
    gains = [float(x.priority) if x.priority is not None else 2.0 * x.lead for x in firsts]
    return p10, rp, ndcg(gains, 10)


def flagged(x: Lead) -> bool:
    """`lead_should_see` as its file says it (the graded files: priority 2 or more)."""
    return bool(x.must) if x.priority is not None else x.lead


def run_lead(
    exs: Sequence[Example], orders: dict[str, Callable[[str], Order]], leads: dict[str, Lead], title: str
) -> None:
    weeks = sorted({e.week for e in exs if e.doc_id in leads and e.lead is not None})  # the shared labels' weeks
    table = Table(title=title)
    table.add_column("order")
    for w in weeks[1:]:
        table.add_column(w, justify="right")
    table.add_column("mean first 10 / R-prec / nDCG@10", justify="right")
    weekly = by_week(exs)
    for name, make in orders.items():
        cells, sums = [], [0.0, 0.0, 0.0]
        for w in weeks[1:]:
            order = make(monday(w))(weekly[w])
            p10, rp, nd = lead_figures(order, leads)
            cells.append(f"{p10:.2f} / {rp:.2f} / {nd:.2f}")
            sums = [s + v for s, v in zip(sums, (p10, rp, nd), strict=True)]
        n = len(weeks) - 1
        table.add_row(name, *cells, " / ".join(f"{s / n:.3f}" for s in sums))
    console.print(table)


# -- positives in whole weeks ----------------------------------------------------------------------------
def placed(weekly: dict[str, list[Example]], wanted: dict[str, str], order: Order) -> list[int | None]:
    """The position of each wanted paper (id -> week) in its week's ranked list (None: no card that week)."""
    out: list[int | None] = []
    for doc_id, week in wanted.items():
        ranked = order(weekly.get(week, []))
        found = positions(ranked, [doc_id])
        out.append(found[0] if found else None)
    return out


def summary(pos: Sequence[int | None]) -> list[str]:
    n = len(pos)
    listed = [p for p in pos if p is not None]
    med = statistics.median([p + 1 if p is not None else 10_000 for p in pos]) if pos else 0
    return [
        f"{len(listed)}/{n}",
        f"{sum(p < 5 for p in listed) / n:.2f}",
        f"{sum(p < 10 for p in listed) / n:.2f}",
        str(med),
    ]


def run_positives(title: str, rows: dict[str, list[int | None]]) -> None:
    table = Table(title=title)
    for col in ("order", "listed", "first 5", "first 10", "median position"):
        table.add_column(col, justify="right" if col != "order" else "left")
    for name, pos in rows.items():
        table.add_row(name, *summary(pos))
    console.print(table)


THRESHOLDS = (0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.93, 0.95)


def run_threshold(exs: Sequence[Example], labels: dict[str, Lead], model: Callable[[str], ConsequenceModel]) -> None:
    """The "evaluate" rule's threshold, measured like the ranking: on each labeled week (a model fitted on the
    weeks before it), the named lab-area methods and systems without a preset whose day-0 score reaches it: how
    many a week, and the share of those labeled that the labels flag (the graded weeks: priority 2 or more)."""
    weeks = sorted({x.week for x in labels.values()})[1:]
    weekly = by_week(exs)
    table = Table(title="the evaluate threshold: calls a week and the share flagged (labeled weeks, time split)")
    for col in ("threshold", "calls a week (median)", "of them labeled", "flagged (lead_should_see)", "share"):
        table.add_column(col, justify="right")
    scored: list[tuple[str, float, Example]] = []
    for w in weeks:
        m = model(monday(w))
        for e in weekly[w]:
            c = e.card
            if c.named and c.area in LAB_AREAS and c.kind in ("method", "system", "hardware") and not c.preset:
                z = m.day0_logit(e.features)
                scored.append((w, m.shown(z), e))
    for t in THRESHOLDS:
        calls = [(w, e) for w, s, e in scored if s >= t]
        per_week = statistics.median([sum(1 for w2, _ in calls if w2 == w) for w in weeks]) if weeks else 0
        labeled = [e for _, e in calls if e.doc_id in labels]
        good = sum(flagged(labels[e.doc_id]) for e in labeled)
        table.add_row(
            f"{t:.2f}", f"{per_week}", str(len(labeled)), str(good), f"{good / len(labeled):.2f}" if labeled else "-"
        )
    console.print(table)


def run_shipped_calls(exs: Sequence[Example], since: str = "2025-01-01", until: str = "2026-07-01") -> None:
    """How many "evaluate" calls the shipped model makes a week at each threshold (its day-0 scores of the named
    lab-area methods and systems without a preset, every week in [since, until)): the call budget a lead reads.
    A volume, not a quality: the quality of the calls is the labeled-weeks table's."""
    model = shipped_consequence()
    per_week: dict[str, list[float]] = defaultdict(list)
    for e in exs:
        c = e.card
        lab = c.named and c.area in LAB_AREAS and c.kind in ("method", "system", "hardware") and not c.preset
        if lab and since <= e.day < until:
            per_week[e.week].append(model.shown(model.day0_logit(e.features)))
    weeks = sorted({e.week for e in exs if since <= e.day < until})
    table = Table(title=f"the shipped model's evaluate calls a week, {len(weeks)} weeks of {since[:7]}..{until[:7]}")
    for col in ("threshold", "median", "90th percentile", "weeks with none"):
        table.add_column(col, justify="right")
    for t in THRESHOLDS:
        counts = sorted(sum(s >= t for s in per_week.get(w, [])) for w in weeks)
        p90 = counts[int(0.9 * (len(counts) - 1))] if counts else 0
        table.add_row(f"{t:.2f}", f"{statistics.median(counts) if counts else 0}", str(p90), str(counts.count(0)))
    console.print(table)


def taken_up(card: MethodCard, days: dict[str, str]) -> bool:
    start = date.fromisoformat(card.introduced_on)
    n = 0
    for doc in card.used_by:
        d = days.get(doc, "")
        if d and UPTAKE_FROM <= (date.fromisoformat(d) - start).days <= UPTAKE_TO:
            n += 1
    return n >= UPTAKE_MIN


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--workspace", type=Path, required=True, help="a workspace of the full corpus (imported, indexed, tagged)"
    )
    ap.add_argument("--lead-c", type=float, default=LEAD_C)
    ap.add_argument("--adopt-c", type=float, default=ADOPT_C)
    ap.add_argument("--must-weight", type=float, default=MUST_WEIGHT)
    ap.add_argument("--adopt-weight", type=float, default=ADOPT_WEIGHT)
    ap.add_argument("--early-weight", type=float, default=EARLY_WEIGHT)
    ap.add_argument("--unnamed-penalty", type=float, default=UNNAMED_PENALTY)
    ap.add_argument("--no-words", action="store_true", help="leave the title's and abstract's words out of the signals")
    ap.add_argument("--skip-uptake", action="store_true")
    ap.add_argument("--lowo", action="store_true", help="also the lead weeks left out one at a time (not a time split)")
    args = ap.parse_args(argv)
    t0 = time.process_time()
    leads = load_leads()
    adopted = load_adopted()
    groups = {t: g for g, ts in _tag_groups().items() for t in ts}
    with Store(args.workspace / "radar.db") as store:
        exs = examples(store, "", "9999", groups=groups, leads=leads, adopted=adopted, words=not args.no_words)
        days = {d.id: d.published[:10] for d in Documents(store).scan(kind="paper")}
    console.print(f"{len(exs):,} cards built in {time.process_time() - t0:.0f} CPU-s")
    priority = {x.doc_id: x for x in leads if x.source != "extra"}  # measured: the shared labels only
    models: dict[tuple[str, str], ConsequenceModel] = {}

    def fitted(train: Sequence[Example], before: str) -> ConsequenceModel:
        """A model with this run's levers, fitted on ``train``'s introductions before ``before``."""
        return fit_model(
            train,
            before,
            lead_c=args.lead_c,
            adopt_c=args.adopt_c,
            must_weight=args.must_weight,
            adopt_weight=args.adopt_weight,
            early_weight=args.early_weight,
            unnamed_penalty=args.unnamed_penalty,
        )

    def model(before: str) -> ConsequenceModel:
        key = (before, "m")
        if key not in models:
            models[key] = fitted(exs, before)
        return models[key]

    def train_before(before: str) -> list[Example]:
        return [e for e in exs if e.day < before]

    orders: dict[str, Callable[[str], Order]] = {
        "today's order": lambda before: today_order,
        "plain: lab areas, central method, code": lambda before: plain_order,
        "words (logistic regression, same labels)": lambda before: words_order(train_before(before)),
        "consequence (day 0)": lambda before: model_order(model(before)),
        # what `radar methods --week` lists for a past week today: the day-0 score plus the first four weeks' uptake
        "consequence + early uptake": lambda before: model_order(model(before), early=True),
    }
    run_lead(exs, orders, priority, "lead weeks: each week ranked by a model fitted on the labeled weeks before it")
    run_threshold(exs, priority, model)
    run_shipped_calls(exs)
    if args.lowo:
        lowo: dict[str, Callable[[str], Order]] = {
            "consequence, fitted on the other labeled weeks": lambda before: model_order(
                fitted(_others(exs, before), "9999"), check=False
            )
        }
        run_lead(exs, lowo, priority, "lead weeks, leave-one-week-out (not a time split: how an unseen week does)")

    weekly = by_week(exs)
    cut = "2024-07-01"
    h2 = {a.doc_id: a.week for a in adopted if monday(a.week) >= cut}
    rows = {name: placed(weekly, h2, make(cut)) for name, make in orders.items()}
    run_positives(f"adopted_dev, second half of 2024 ({len(h2)}), fitted before {cut}", rows)

    if not args.skip_uptake:
        quarters = ["2025-01-01", "2025-04-01", "2025-07-01", "2025-10-01", "2026-01-01"]
        up_rows: dict[str, list[int | None]] = defaultdict(list)
        for q0, q1 in zip(quarters, quarters[1:], strict=False):
            wanted = {
                e.doc_id: e.week
                for e in exs
                if q0 <= e.day < q1 and e.card.named and taken_up(e.card, days) and e.card.area in LAB_AREAS
            }
            start = min((monday(w) for w in wanted.values()), default=q0)  # the quarter's first measured week
            for name, make in orders.items():
                up_rows[name] += placed(weekly, wanted, make(start))
        run_positives(
            f"later uptake: lab-area cards of 2025-01..2025-12 named by {UPTAKE_MIN}+ later papers in weeks 5-26",
            dict(up_rows),
        )
    console.print(f"{time.process_time() - t0:.0f} CPU-s in all")
    return 0


def _tag_groups() -> dict[str, list[str]]:
    from radar.analysis.tags.taxonomy import load_taxonomy

    return {g: list(names) for g, names in load_taxonomy(None).groups.items()}


if __name__ == "__main__":
    raise SystemExit(main())
