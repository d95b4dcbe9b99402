"""Which section of the report a paper belongs in: the area of its contribution, not every tag it carries.

The seam is ``Area``: ``area_of(doc_id) -> str | None``, handed in by the composition root (app.steps: the
paper's contribution area, analysis.contributions).

- a tag of the report (``rl-policy-optimization``): that section;
- one of the lab's areas (``rl-post-training``, ``hardware-systems``: the taxonomy's two lab groups): the section
  of the paper's highest-scoring tag in that group, unless an application field marks the paper as work
  elsewhere (below: then the "elsewhere" line); a paper with no tag of that group: the fallback;
- any other text (``other-llm``, ``other``): the fallback. The contributions model's call that a paper lies
  outside the lab's areas is right about half the time on the labeled weeks (benchmarks/backtest_sections.py:
  it would move half the lab's papers out of its sections), so it never moves a paper out on its own;
- None: not known (a post, a paper the contributions stage has not decided): the fallback below.

The fallback reads the tags and the paper's own metadata: the paper's highest-scoring tag, when the tagger is more
likely than not that its contribution fits it (score >= ``SECTION_SCORE``), unless an application field marks the
paper as work elsewhere: an arXiv category outside computing and statistics (speech and audio, physics, biology,
medicine, finance, ...), or an application domain named in its title (clinical, medical, speech, molecular, ...): then
it is "elsewhere". A paper whose best tag scores lower is in no section (still counted under its tags); lower-scoring
tags never pull a paper into a section (a GRPO paper tagged distributed-training at 0.14 is an RL paper).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from radar.analysis.contributions.labels import LAB_AREAS
from radar.crawler.documents import Document

Area = Callable[[str], str | None]

SECTION_SCORE = 0.5  # the tagger's probability: more likely than not the contribution fits the tag
# arXiv categories (and prefixes) of fields the lab's methods are applied to, not contributed in
APPLICATION_CATEGORIES = (
    "eess.AS",
    "cs.SD",
    "eess.IV",
    "physics.",
    "q-bio.",
    "q-fin.",
    "econ.",
    "astro-ph",
    "cond-mat.",
    "hep-",
    "nucl-",
    "gr-qc",
    "quant-ph",
)
APPLICATION_WORDS = re.compile(
    r"\b(clinical|medical|medicine|diagnos\w*|patients?|radiolog\w*|biomedical|health\w*|drug|protein\w*|"
    r"molecul\w*|chemi\w*|genom\w*|speech|tts|text-to-speech|prosody|audio|music|financ\w*|legal|climate|"
    r"weather|seismic|astronom\w*)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Placement:
    section: str | None  # the tag whose section lists the paper; None: no section
    elsewhere: str = ""  # why it is "elsewhere" (its area, a category or a title word); "" when it is not


def application_field(doc: Document) -> str:
    """The application field the paper's metadata names ("" none): a category, else a title word."""
    for cat in doc.categories or (doc.primary_category,):
        if cat.startswith(APPLICATION_CATEGORIES):
            return cat
    found = APPLICATION_WORDS.search(doc.title)
    return found.group(0).lower() if found else ""


def _best(scores: Mapping[str, float]) -> str:
    return max(scores, key=lambda t: (scores[t], t))


def place(doc: Document, scores: Mapping[str, float], sections: Mapping[str, str], area_of: Area | None) -> Placement:
    """Where ``doc`` (its tag scores ``scores``) goes among the report's ``sections`` (tag -> its group)."""
    area = area_of(doc.id) if area_of is not None else None
    decided = _by_area(doc, scores, sections, area) if area is not None else None
    if decided is not None:
        return decided
    mine = {t: s for t, s in scores.items() if t in sections}
    if not mine:
        return Placement(None)
    best = _best(mine)
    field = application_field(doc)
    if field:
        return Placement(None, field)
    return Placement(best) if mine[best] >= SECTION_SCORE else Placement(None)  # unsure: in no section


def _by_area(doc: Document, scores: Mapping[str, float], sections: Mapping[str, str], area: str) -> Placement | None:
    """The placement the contribution's area decides, None when it leaves it to the fallback."""
    if area in sections:
        return Placement(area)
    here = {t: s for t, s in scores.items() if sections.get(t) == area} if area in LAB_AREAS else {}
    mine = [s for t, s in scores.items() if t in sections]
    if not here or max(mine) < SECTION_SCORE:
        return None  # no tag of that group, or the tagger unsure of every tag: the fallback (no section)
    field = application_field(doc)
    return Placement(None, field) if field else Placement(_best(here))
