"""Adoption recommendations: adopt / reproduce / evaluate / watch, each from a named rule, on evidence only.

A candidate (reports/evidence.py gathers them) is a method, system or hardware design of the period's method
cards in the profile's areas (new this period), a name whose adoption by the period's papers rises (the
names the period's papers build on or compare against, the trends' new methods), or a reproduction preset's
method that the period's papers name. Its evidence: the papers naming it (the store's mentions: this period,
the trailing weeks, all by the period's end), those comparing against it, the introducing paper and that
paper's own code links, relevance to the profile, the preset that expresses it and the latest finished run.

Rules are pure functions in a registry, tried in order; the first that fires decides, and the
recommendation names it and its reason so a reader can disagree with a reason:

  repro-worse        a finished reproduction of class evidence found it worse      -> watch
  repro-better       an adoptable finished reproduction found it better            -> adopt
                     (class evidence on a real checkpoint, a matching A/A run, Holm across the week's
                     runs against the same baseline or a replication: repro/adoption.py)
  framework-adopt    a framework the profile names ([profile] frameworks) took it in, and a powered  -> adopt
                     reproduction found it no worse (better or no clear difference) or the lab chose
                     it ([profile] chosen)
  reproduce-focus    a focus method a preset expresses (which, with its TRL knobs), not run yet, with
                     evidence this period: new, rising adoption, or compared against  -> reproduce
  framework-first    the first framework commit or release naming it is of this period -> evaluate
                     (analysis/contributions/frameworks.py matches them; the reason links it)
  rising-adoption    more of the period's papers name it than its trailing rate says  -> evaluate
                     (volume-adjusted, one-sided binomial test, Benjamini-Hochberg over the names tested)
  used-as-baseline   at least 3 of the period's papers compare against it           -> evaluate
  consequential      introduced this period with a consequence score of at least     -> evaluate
                     ``EVALUATE_AT`` (analysis/contributions/consequence.py: the day-0 signals a lead
                     reads, fitted on what the field adopted; the threshold measured like the ranking)
  new                introduced by one of the period's papers                        -> watch
  in-use             named this period, adoption not rising                          -> watch
                     (kept for a preset's method only: reports/content.py drops the others)

No rule fires on a preset's existence alone: reproduce-focus needs the period's evidence beside it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from radar.crawler.documents import Document
from radar.reports.runs import RunSummary
from radar.reports.text import plain

ACTIONS = ("adopt", "reproduce", "evaluate", "watch")
CODE_LINK = re.compile(
    r"https?://(?:www\.)?(?:github\.com|gitlab\.com|huggingface\.co|bitbucket\.org)/[^\s)\]}>,;\"']+", re.IGNORECASE
)
# a new card's day-0 consequence worth evaluating: 4-5 calls a median week with the shipped model (docs/benchmarks.md)
EVALUATE_AT = 0.80
ADOPTED_BASELINE = 3  # papers of the period comparing against a method: the field's bar to beat
COMPARED_FOR_REPRO = 2  # ... enough beside a preset to reproduce it


@dataclass(slots=True)  # slotted: msgspec.convert then sets every field (a default too), to_builtins writes each
class Evidence:
    """What the store says about one name for one period (every count recomputable from the store's mentions)."""

    method: str
    origin: str  # "new this period", "adoption" (built on, compared against, a trends new method) or "preset"
    papers: list[dict[str, str]] = field(default_factory=list)  # introducing paper first, then the period's, newest
    introduced_by: dict[str, str] = field(default_factory=dict)  # the introducing paper (id, title, published, url)
    kind: str = ""
    area: str = ""  # the card's area ('' without a card)
    focus: bool = False  # in the profile's areas (the card's area, else the relevance of the period's papers)
    new: bool = False  # introduced by one of the period's papers
    count: int = 0  # papers naming it that entered the record by the period's end (its own paper included)
    recent_count: int = 0  # ... in the period
    compared_count: int = 0  # the period's papers comparing against it
    trailing_count: int = 0  # papers naming it in the trailing weeks before the period
    trailing_weeks: int = 0
    growth: float = 0.0  # (recent / period papers) / (trailing / trailing papers); 0 when trailing is 0
    p_value: float = 1.0  # one-sided conditional binomial test that the rate rose
    rising: bool = False  # among the period's discoveries (Benjamini-Hochberg over the names tested)
    first_seen: str = ""  # the introducing paper's day, else the first stored paper naming it
    code_links: list[str] = field(default_factory=list)  # the introducing paper's own (its abstract's) links
    relevance: float = 0.0  # mean relevance to the profile of the period's papers naming it
    preset: str = ""  # the reproduction preset that expresses it, '' if none
    preset_knobs: str = ""  # what that preset sets: its TRL GRPOConfig fields, shaping, sampling, loss plug-in
    run: RunSummary | None = None  # latest finished repro run of the preset (setup, class, verdict, adoptable)
    adopted: list[dict[str, str]] = field(default_factory=list)  # first entry per framework: framework, date, link
    consequence: float = 0.0  # the card's consequence score (0 without a card)
    consequence_why: str = ""  # the evidence behind it
    first_adopted_this_period: bool = False  # the first framework to take it in did so in this period
    profile_frameworks: list[str] = field(default_factory=list)  # of those frameworks, the ones [profile] names
    chosen: bool = False  # the lab chose to adopt it ([profile] chosen)


@dataclass(slots=True)
class Recommendation:
    method: str
    action: str
    rule: str
    reason: str
    evidence: Evidence  # a row of report.json: these fields as msgspec writes them (``msgspec.to_builtins``)


Rule = Callable[[Evidence], str | None]  # returns the reason when the rule fires


def rule_repro_worse(e: Evidence) -> str | None:
    run = e.run
    if run is not None and run.verdict == "worse" and run.evidence_class == "evidence":
        return f"reproduction {run.id} ({run.setup}) found it worse than {run.baseline}; keep watching"
    return None


def rule_repro_better(e: Evidence) -> str | None:
    """Only an adoptable run: a pipeline check or an underpowered run never makes an "adopt"."""
    run = e.run
    if run is not None and run.verdict == "better" and run.adoptable:
        return f"reproduction {run.id} ({run.setup}) found it better than {run.baseline}: {run.adoption}"
    return None


NO_WORSE = ("better", "no clear difference")  # a powered reproduction's verdicts that find a method no worse


def _adoption(a: dict[str, str]) -> str:
    return f"{a['framework']} ({a['date']}, {a['link']})"


def rule_framework_adopt(e: Evidence) -> str | None:
    """A framework the profile names took it in, and our reproduction found it no worse or the lab chose it."""
    mine = [a for a in e.adopted if a["framework"].lower() in {f.lower() for f in e.profile_frameworks}]
    if not mine:
        return None
    run = e.run
    if run is not None and run.evidence_class == "evidence" and run.overall in NO_WORSE:
        backing = f"reproduction {run.id} ({run.setup}) found it no worse than {run.baseline} ({run.overall})"
    elif e.chosen:
        backing = "the lab chose to adopt it ([profile] chosen)"
    else:
        return None
    return f"adopted by {', '.join(map(_adoption, mine))}, a framework the lab runs; {backing}"


def rule_framework_first(e: Evidence) -> str | None:
    """A framework took it in for the first time this period: the field's engineers bet on it."""
    if not e.first_adopted_this_period:
        return None
    first = min(e.adopted, key=lambda a: (a["date"], a["framework"]))
    others = len(e.adopted) - 1
    more = f" ({others} more framework(s) by the period's end)" if others else ""
    return f"first adopted by a framework this period: {_adoption(first)}{more}; evaluate it on our setup"


def _rise(e: Evidence) -> str:
    return (
        f"{e.recent_count} paper(s) this period name it against {e.trailing_count} in the {e.trailing_weeks} weeks "
        f"before (rate ratio {e.growth:.1f}x at this period's volume, p = {e.p_value:.3f})"
        if e.trailing_count
        else f"{e.recent_count} paper(s) this period name it, none in the {e.trailing_weeks} weeks before "
        f"(p = {e.p_value:.3f})"
    )


def this_period(e: Evidence) -> str:
    """The period's evidence a reproduction needs beside a preset ('' when there is none)."""
    if e.new:
        return f"introduced this period ({e.introduced_by.get('id', '')})"
    if e.rising:
        return f"its adoption rises: {_rise(e)}"
    if e.compared_count >= COMPARED_FOR_REPRO:
        return f"{e.compared_count} of this period's papers compare against it"
    return ""


def rule_reproduce_focus(e: Evidence) -> str | None:
    why = this_period(e)
    if e.preset and e.focus and e.run is None and why:
        knobs = f" ({e.preset_knobs})" if e.preset_knobs else ""
        return (
            f"a focus method the `{e.preset}` preset expresses{knobs}; {why}; no run has checked it: "
            f"`radar repro run --method {e.preset}`"
        )
    return None


def rule_rising_adoption(e: Evidence) -> str | None:
    if e.rising:
        return f"{_rise(e)}: its adoption rises; evaluate it on our setup"
    return None


def rule_used_as_baseline(e: Evidence) -> str | None:
    """Many of the period's papers compare against it: the field treats it as the bar to beat."""
    if e.compared_count >= ADOPTED_BASELINE:
        return (
            f"{e.compared_count} of this period's papers compare against it ({e.recent_count} name it): the field's "
            "baseline; evaluate it on our setup"
        )
    return None


def rule_consequential(e: Evidence) -> str | None:
    """A new card whose consequence score says a lead should act on it: its evidence is the score's."""
    if e.new and e.consequence >= EVALUATE_AT:
        why = f": {e.consequence_why}" if e.consequence_why else ""
        paper = e.introduced_by.get("id", "")
        return f"introduced this period ({paper}), consequence {e.consequence:.2f}{why}; evaluate it on our setup"
    return None


def rule_new(e: Evidence) -> str | None:
    if e.new:
        code = "; code public" if e.code_links else "; no code link in its abstract"
        return f"introduced this period ({e.introduced_by.get('id', '')}){code}: watch whether others adopt it"
    return None


def rule_in_use(e: Evidence) -> str | None:
    preset = f"; the `{e.preset}` preset can reproduce it when it does" if e.preset else ""
    return f"{_rise(e)}: adoption not rising{preset}"


RULES: dict[str, tuple[str, Rule]] = {
    "repro-worse": ("watch", rule_repro_worse),
    "repro-better": ("adopt", rule_repro_better),
    "framework-adopt": ("adopt", rule_framework_adopt),
    "reproduce-focus": ("reproduce", rule_reproduce_focus),
    "framework-first": ("evaluate", rule_framework_first),
    "rising-adoption": ("evaluate", rule_rising_adoption),
    "used-as-baseline": ("evaluate", rule_used_as_baseline),
    "consequential": ("evaluate", rule_consequential),
    "new": ("watch", rule_new),
    "in-use": ("watch", rule_in_use),
}


def decide(evidence: Evidence) -> Recommendation:
    for name, (action, rule) in RULES.items():
        reason = rule(evidence)
        if reason is not None:
            return Recommendation(evidence.method, action, name, reason, evidence)
    raise AssertionError("the last rule always fires")  # pragma: no cover


# -- gathering evidence --------------------------------------------------------------------------
def code_links(docs: Iterable[Document]) -> list[str]:
    links: list[str] = []
    for d in docs:
        if "http" not in d.abstract:
            continue
        for m in CODE_LINK.findall(d.abstract):
            link = m.rstrip(".")
            if link not in links:
                links.append(link)
    return links


Presets = Mapping[str, str]  # reproduction preset -> its title (the composition root reads them from repro)


def preset_name(preset: str, presets: Presets) -> str:
    """A repro preset by the name its papers use: 'Dr. GRPO', 'DAPO', ..."""
    return presets[preset].split(" (")[0].replace(" - plug-in", "").strip()


def preset_patterns(presets: Presets) -> dict[str, re.Pattern[str]]:
    """Patterns for the repro presets' names (not the GRPO baselines'), by preset."""
    out = {}
    for name in presets:
        if name == "grpo" or name.startswith("grpo-"):
            continue
        shown = preset_name(name, presets)
        words = [re.escape(w.rstrip(".")) for w in re.split(r"[\s.]+", shown) if w]
        out[name] = re.compile(r"(?<![A-Za-z0-9])" + r"[\s.\-]*".join(words) + r"(?![A-Za-z0-9])", re.IGNORECASE)
    return out


def match_preset(name: str, patterns: dict[str, re.Pattern[str]]) -> str:
    key = re.sub(r"[^a-z0-9]", "", name.lower())
    for preset, pat in patterns.items():
        if re.sub(r"[^a-z0-9]", "", preset) == key or pat.fullmatch(name.strip()):
            return preset
    return ""


def paper_ref(d: Document) -> dict[str, str]:
    return {"id": d.id, "title": plain(d.title), "published": d.published[:10], "url": d.url}
