"""The evidence behind the recommendations: candidates and what the store says about each for one period.

Candidates (reports/recommend.py names the rules), each with its introducing paper, kind and area:
- the period's method cards in the profile's areas of a method kind (new this period);
- the reproduction presets' methods (their paper: the one each preset names), not the GRPO baselines;
- the trends' new methods (introduced in the last months, named by later papers): adoption candidates.

Counts are the stored mentions (``Contributions.mentions_of``: the papers whose title or abstract names a spelling
of the name) plus the introducing paper: ``recent_count`` those of the period's papers, ``compared_count`` of those the
ones comparing against it, ``trailing_count`` those of the trailing weeks' papers, ``count`` all that entered the
record by the period's end. A candidate the period's papers do not name is dropped; one outside the profile's
areas is named in the report's note. A rise: the period's rate against the trailing rate at the two windows'
volumes, a one-sided conditional binomial test per name, Benjamini-Hochberg at ``FDR`` over the names tested
(those named by at least ``MIN_RISING`` of the period's papers).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict

import numpy as np
from scipy.stats import binomtest, false_discovery_control

from radar.analysis.contributions.adoptions import Adopted, Adoptions
from radar.analysis.contributions.cards import MethodCard, mentions_for, preset_for
from radar.analysis.contributions.frameworks import first_adoptions
from radar.analysis.contributions.senses import Intro, sense_with, senses_of
from radar.analysis.contributions.table import Contributions, MentionRow
from radar.analysis.contributions.update import name_key
from radar.analysis.trends.result import NewMethod
from radar.crawler.documents import Document, Documents
from radar.reports.period import Period
from radar.reports.ranking import Ranked
from radar.reports.recommend import Evidence, Presets, paper_ref, preset_name
from radar.reports.runs import RunSummary
from radar.store.dates import entered
from radar.store.table import Database

MIN_RISING = 3  # papers of the period naming a name before its rise is tested
FDR = 0.1
MAX_PAPERS = 6
PRESET_AREA = "rl-post-training"  # the reproduction presets are GRPO-family post-training methods


@dataclass
class Candidate:
    name: str
    origin: str
    intro: str | None  # the introducing paper's id
    kind: str
    area: str
    code: tuple[str, ...] = ()
    preset: str = ""
    consequence: float = 0.0
    why: str = ""


def _entered_day(m: MentionRow) -> str:
    return entered(m.doc_id, f"{m.published}T00:00:00Z")[:10]


def is_baseline(preset: str) -> bool:
    """The GRPO baselines every reproduction runs against: never a recommendation of their own."""
    return preset == "grpo" or preset.startswith("grpo-")


def candidates(
    store: Database,
    cards: Sequence[MethodCard],
    areas: Sequence[str],
    kinds: frozenset[str | None],
    trend_names: Sequence[NewMethod],
    presets: Presets,
    preset_papers: Mapping[str, str],
) -> dict[str, Candidate]:
    """Candidates by spelling key: the period's new cards, then the presets' methods (with the paper each preset
    names), then the trends' new methods; the GRPO baselines' names are none of them."""
    found: dict[str, Candidate] = {}
    baselines = {name_key(preset_name(p, presets)) for p in presets if is_baseline(p)}

    def add(key: str, cand: Candidate) -> None:
        if key and key not in baselines:
            found.setdefault(key, cand)

    for card in cards:  # a finding with no name is read in New this week; no other paper names its handle
        if card.named and card.area in areas and card.kind in kinds:
            preset = "" if is_baseline(card.preset) else card.preset
            cand = Candidate(
                card.name,
                "new this period",
                card.introduced_by,
                card.kind,
                card.area,
                card.code,
                preset,
                card.consequence.day0,  # calls are decided on day 0 (the threshold's calibration; calls.py)
                "; ".join(card.consequence.day0_evidence),
            )
            add(name_key(card.name), cand)
    rows = Contributions(store).contributions([*preset_papers.values(), *(m.first_id for m in trend_names)])
    stored = Documents(store).of(preset_papers.values())
    for preset in presets:
        if not is_baseline(preset):
            paper = preset_papers.get(preset, "")
            intro = paper if paper in stored else None
            code = rows[paper].code if paper in rows else ()
            name = preset_name(preset, presets)
            add(name_key(name), Candidate(name, "preset", intro, "method", PRESET_AREA, code, preset))
    for m in trend_names:
        row = rows.get(m.first_id)
        preset = preset_for(m.name, presets)[0]
        cand = Candidate(
            m.name,
            "adoption",
            m.first_id or None,
            str(m.kind or ""),
            str(m.area or ""),
            row.code if row else (),
            "" if is_baseline(preset) else preset,
        )
        add(name_key(m.name), cand)
    return found


def gather_evidence(
    store: Database,
    period: Period,
    *,
    cards: Sequence[MethodCard],
    areas: Sequence[str],
    kinds: frozenset[str | None],
    trend_names: Sequence[NewMethod],
    ranked: Sequence[Ranked],
    baseline: Sequence[Document],
    trailing_weeks: int,
    runs: Sequence[RunSummary],
    presets: Presets,
    knobs: Mapping[str, str],
    preset_papers: Mapping[str, str],
    frameworks: Sequence[str] = (),
    chosen: Sequence[str] = (),
) -> tuple[list[Evidence], list[str]]:
    """(the evidence of every candidate the period's papers name, the names left out as outside the profile).
    ``frameworks``: those the profile names; ``chosen``: the methods the lab chose to adopt."""
    papers = {r.doc.id: r.doc for r in ranked}
    relevance = {r.doc.id: r.relevance for r in ranked}
    trailing_ids = {d.id for d in baseline}
    end = period.end.isoformat()
    latest_run: dict[str, RunSummary] = {}
    for run in runs:  # newest first
        latest_run.setdefault(run.method, run)
    found = candidates(store, cards, areas, kinds, trend_names, presets, preset_papers)
    # as the cards count them: by spelling key, and a name of several words ("Dr. GRPO") also by its phrase
    contributions = Contributions(store)
    mentions = mentions_for(contributions, [(c.name, "") for c in found.values()])
    introducing: dict[str, list[Intro]] = {}  # the papers introducing each name: a reused acronym's senses
    for row in contributions.introductions_of(found):
        introducing.setdefault(row.name_key, []).append(Intro(row.doc_id, row.published, row.area))
    intros = Documents(store).of([c.intro for c in found.values() if c.intro])
    adoptions = Adoptions(store).adoptions_of(found)
    chosen_keys = {name_key(c) for c in chosen}
    out: list[Evidence] = []
    left_out: list[str] = []
    for key, cand in found.items():
        intro_doc = intros.get(cand.intro or "")
        if intro_doc is not None and entered(intro_doc.id, intro_doc.published)[:10] > end:
            intro_doc = None  # its paper had not appeared by the period's end: a report never cites the future
        rows = own_sense(mentions.get(key, []), intro_doc, introducing.get(key, []))
        naming = {m.doc_id for m in rows if _entered_day(m) <= end}
        if intro_doc is not None:
            naming.add(intro_doc.id)  # its own paper names it (even where no mention row was kept)
        recent_ids = sorted(i for i in naming if i in papers)
        if not recent_ids:
            continue  # not named this period: nothing to act on
        if cand.area not in areas:
            left_out.append(cand.name)
            continue
        compared = {m.doc_id for m in rows if m.compared}
        rel = [relevance[i] for i in recent_ids]
        shown = sorted((papers[i] for i in recent_ids if i != cand.intro), key=lambda d: (d.published, d.id))[::-1]
        refs = ([paper_ref(intro_doc)] if intro_doc is not None else []) + [paper_ref(d) for d in shown]
        out.append(
            Evidence(
                method=cand.name,
                origin=cand.origin,
                papers=refs[:MAX_PAPERS],
                introduced_by=paper_ref(intro_doc) if intro_doc is not None else {},
                kind=cand.kind,
                area=cand.area,
                focus=True,
                new=cand.origin == "new this period",
                count=len(naming),
                recent_count=len(recent_ids),
                compared_count=sum(1 for i in recent_ids if i in compared),
                trailing_count=sum(1 for i in naming if i in trailing_ids),
                trailing_weeks=trailing_weeks,
                first_seen=intro_doc.published[:10] if intro_doc is not None else (rows[0].published if rows else ""),
                code_links=list(cand.code),
                relevance=round(sum(rel) / len(rel), 3),
                preset=cand.preset,
                preset_knobs=knobs.get(cand.preset, "") if cand.preset else "",
                run=latest_run.get(cand.preset) if cand.preset else None,
                consequence=cand.consequence,
                consequence_why=cand.why,
                **framework_evidence(adoptions.get(key, []), cand.intro, period, frameworks),
                chosen=key in chosen_keys,
            )
        )
    rising(out, len(papers), len(trailing_ids))
    return out, left_out


def framework_evidence(
    adopted: Sequence[Adopted], intro: str | None, period: Period, frameworks: Sequence[str]
) -> FrameworkEvidence:
    """The frameworks that took the candidate in by the period's end (the first entry of each; matches of another
    paper's sense of the name left out), whether the first of them fell in the period, and the profile's."""
    end, start = period.end.isoformat(), period.start.isoformat()
    mine = [a for a in adopted if a.date <= end and (not intro or not a.intro_id or a.intro_id == intro)]
    first = first_adoptions(mine)
    earliest = min((a.date for a in first.values()), default="")
    return {
        "adopted": [{"framework": a.framework, "date": a.date, "link": a.link} for a in first.values()],
        "first_adopted_this_period": bool(earliest) and earliest >= start,
        "profile_frameworks": [f for f in frameworks if f.lower() in {k.lower() for k in first}],
    }


class FrameworkEvidence(TypedDict):
    adopted: list[dict[str, str]]
    first_adopted_this_period: bool
    profile_frameworks: list[str]


def own_sense(rows: Sequence[MentionRow], intro: Document | None, intros: Sequence[Intro] = ()) -> list[MentionRow]:
    """The mentions that mean the candidate. With its introducing paper known: those of that paper's sense (the
    long forms papers give and the papers introducing the name afresh, analysis.contributions.senses, as its card
    counts them) on or after the paper's day; an earlier paper spelled alike names something else (SPaRK and
    SparK before SPARK)."""
    if intro is None:
        return list(rows)
    sense = sense_with(senses_of(rows, intros), intro.id)
    mine = list(sense.mentions) if sense is not None else list(rows)
    return [m for m in mine if m.published >= intro.published[:10]]


def rising(found: Sequence[Evidence], period_papers: int, trailing_papers: int) -> None:
    """Fill growth, p_value and rising: the period's rate of papers naming each name against the trailing weeks'
    (conditional on both counts, the period's share is binomial with the period's share of the papers when the
    rate did not change), Benjamini-Hochberg at ``FDR`` over the names named by ``MIN_RISING`` or more."""
    if not period_papers:
        return
    p0 = period_papers / (period_papers + trailing_papers) if trailing_papers else 1.0
    tested = []
    for e in found:
        n = e.recent_count + e.trailing_count
        if e.trailing_count and trailing_papers:
            e.growth = round((e.recent_count / period_papers) / (e.trailing_count / trailing_papers), 2)
        if n and p0 < 1.0:
            e.p_value = round(float(binomtest(e.recent_count, n, p0, alternative="greater").pvalue), 4)
        if e.recent_count >= MIN_RISING and p0 < 1.0:
            tested.append(e)
    if not tested:
        return
    adjusted = false_discovery_control(np.array([e.p_value for e in tested]), method="bh")
    for e, q in zip(tested, adjusted, strict=True):
        e.rising = bool(q <= FDR)
