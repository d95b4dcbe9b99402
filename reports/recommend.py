"""Adoption recommendations: watch / evaluate / adopt / reproduce, each from a named rule.

A flagged method is a new method from the trends, or a reproduction preset (repro.methods) that
the period's papers mention. Its evidence: the papers (period and trailing weeks), their growth,
code availability (code links in the abstracts), relevance to the profile (mean relevance of its
papers this period), the matching repro preset and the latest finished run of it.

Rules are pure functions in a registry, tried in order; the first that fires decides, and the
recommendation names it and its reason so a reader can disagree with a reason:

  repro-worse        a finished reproduction of class evidence found it worse     -> watch
  repro-better       an adoptable finished reproduction found it better          -> adopt
                     (class evidence, a matching A/A run, Holm across the week's
                     runs against the same baseline or a replication: repro/adoption.py)
  established        code, >= 10 papers, relevance >= 0.5, not shrinking          -> adopt
  reproduce-preset   a repro preset exists, no run yet, relevant and active       -> reproduce
  code-and-relevant  code available, relevance >= 0.3, papers this period        -> evaluate
  rising             anything else flagged                                         -> watch

A method that only "rises", with no relevance to the profile and no repro preset, is left out of the
list (reports/content.py); the report names the left-out methods in one line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from radar.reports.runs import RunSummary
from radar.reports.text import plain
from radar.store.models import Document

ACTIONS = ("adopt", "reproduce", "evaluate", "watch")
CODE_LINK = re.compile(
    r"https?://(?:www\.)?(?:github\.com|gitlab\.com|huggingface\.co|bitbucket\.org)/[^\s)\]}>,;\"']+", re.IGNORECASE
)


@dataclass
class Evidence:
    method: str
    origin: str  # "new method (trends)" or "repro preset mentioned"
    papers: list[dict[str, str]] = field(default_factory=list)  # id, title, published, url (most recent first)
    count: int = 0  # papers mentioning it, as far as the report looked (trends: all time)
    recent_count: int = 0  # in the period
    growth: float = 0.0  # period rate / trailing rate (trends' own growth for new methods)
    first_seen: str = ""
    code_links: list[str] = field(default_factory=list)
    relevance: float = 0.0
    preset: str = ""  # repro preset name, "" if none
    run: RunSummary | None = None  # latest finished repro run of the preset (setup, class, verdict, adoptable)
    baseline_mentions: int = 0  # papers that compare against it (analysis.names): adoption, not novelty
    recent_baseline_mentions: int = 0  # of those, in the recent window
    introduced: str = ""  # date of the introducing paper's first mention (names), "" when unknown


@dataclass
class Recommendation:
    method: str
    action: str
    rule: str
    reason: str
    evidence: Evidence

    def as_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "action": self.action,
            "rule": self.rule,
            "reason": self.reason,
            "evidence": asdict(self.evidence),
        }


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


def rule_established(e: Evidence) -> str | None:
    if e.code_links and e.count >= 10 and e.relevance >= 0.5 and e.growth >= 1.0:
        return f"{e.count} papers, growing ({e.growth:.1f}x), code public, relevance {e.relevance:.2f} to the profile"
    return None


def rule_reproduce_preset(e: Evidence) -> str | None:
    if e.preset and e.run is None and e.relevance >= 0.3 and (e.recent_count >= 2 or e.growth >= 1.5):
        return f"a reproduction preset exists and no run has checked it: `radar repro run --method {e.preset}`"
    return None


def rule_code_and_relevant(e: Evidence) -> str | None:
    if e.code_links and e.relevance >= 0.3 and e.recent_count >= 1:
        return f"code is public and it is relevant to the profile ({e.relevance:.2f}); try it on our setup"
    return None


ADOPTED_BASELINE = 3  # recent papers comparing against a method that make it the field's baseline


def rule_used_as_baseline(e: Evidence) -> str | None:
    """Many recent papers compare against it: an adoption signal (the field treats it as the bar to beat)."""
    if e.recent_baseline_mentions >= ADOPTED_BASELINE and e.relevance >= 0.3:
        since = f", introduced {e.introduced}" if e.introduced else ""
        return (
            f"used as a baseline by {e.recent_baseline_mentions} recent paper(s) ({e.baseline_mentions} in all"
            f"{since}): adoption, not novelty; evaluate it on our setup"
        )
    return None


def rule_rising(e: Evidence) -> str | None:
    missing = [
        what
        for what, ok in (("code", bool(e.code_links)), ("relevance", e.relevance >= 0.3), ("volume", e.count >= 10))
        if not ok
    ]
    used = f", used as a baseline by {e.recent_baseline_mentions} recent paper(s)" if e.recent_baseline_mentions else ""
    return f"{e.recent_count} paper(s) this period, growth {e.growth:.1f}x{used}" + (
        f"; not yet: {', '.join(missing)}" if missing else ""
    )


RULES: dict[str, tuple[str, Rule]] = {
    "repro-worse": ("watch", rule_repro_worse),
    "repro-better": ("adopt", rule_repro_better),
    "established": ("adopt", rule_established),
    "reproduce-preset": ("reproduce", rule_reproduce_preset),
    "used-as-baseline": ("evaluate", rule_used_as_baseline),
    "code-and-relevant": ("evaluate", rule_code_and_relevant),
    "rising": ("watch", rule_rising),
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
