"""``contribution_of(doc)``: what one paper introduces, decided from its title and abstract alone.

Flow: ``extract`` (candidates and cues) -> ``ContributionModel.decide`` (name, kind, area, builds_on) ->
``changes_line`` (the abstract's own sentence about it, trimmed) -> a ``Contribution``. No embeddings or tags
are read, so a paper's contribution is known the moment it is stored; ``contributions_of`` does many.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from radar.analysis.contributions.extract import INTRO, SENTENCE, Extracted, plain_text, title_prefix
from radar.analysis.contributions.extract import extract as extract_candidates
from radar.analysis.contributions.model import ContributionModel, shipped_model
from radar.analysis.names.extract import code_links
from radar.analysis.texts import DocumentText

CHANGES_CHARS = 200
_LEAD = re.compile(
    r"^(?:(?:to\s+(?:address|tackle|overcome|solve|bridge|fill|mitigate|alleviate)\b[^,]*|in\s+this\s+\w+|"
    r"here|specifically|therefore|thus|hence|motivated\s+by[^,]*|based\s+on[^,]*|building\s+on[^,]*|"
    r"inspired\s+by[^,]*|in\s+response[^,]*|instead|finally|first|second|to\s+this\s+end),\s*)+",
    re.IGNORECASE,
)
_APPOSITIVE = re.compile(r"^\s*(?:\([^)]{0,80}\)\s*)?(?:,|:|\s[-–—]{1,2})\s*((?:a|an|the)\s+.+)$", re.IGNORECASE)
_RELATIVE = re.compile(r"^\s*(?:\([^)]{0,80}\)\s*)?,?\s*((?:which|that|to)\s+.+)$", re.IGNORECASE)


class PaperText(DocumentText, Protocol):
    """What contributions read of a document (``radar.store.Document`` has it): its text and categories."""

    @property
    def categories(self) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class Contribution:
    """What one paper contributes, as the model decided it (``model`` names the version)."""

    doc_id: str
    introduces: bool
    name: str  # '' when it introduces nothing named
    also: tuple[str, ...]  # other names it introduces
    kind: str  # method | model | system | benchmark | hardware | other ('' when it introduces nothing)
    area: str  # rl-post-training | hardware-systems | other-llm | other
    builds_on: tuple[str, ...]  # names it builds on or compares against
    changes: str  # one line: what it is or changes (the abstract's own words)
    code: tuple[str, ...]  # code links in its own abstract
    score: float  # probability that it introduces ``name``
    kind_score: float
    model: str  # the model version that decided it


def _clip(text: str, limit: int = CHANGES_CHARS) -> str:
    text = text.strip().rstrip(".;,: ")
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0].rstrip(",;:(- ")
    return cut + " …"


def sentences(abstract: str) -> list[str]:
    return [s.strip() for s in SENTENCE.split(" ".join(abstract.split())) if s.strip()]


def changes_line(title: str, abstract: str, name: str) -> str:
    """One line of what ``name`` is or changes, in the abstract's own words: the clause that introduces it
    ("X, a method that ...", "we propose X, which ..."), else the first sentence naming it, else the title's
    subtitle; framing ("To address this, we propose") is cut, and the line is at most ``CHANGES_CHARS``."""
    title, abstract = plain_text(title), plain_text(abstract)
    sents = sentences(abstract)
    named = [s for s in sents if name and name in s]
    chosen = next((s for s in named if INTRO.search(s)), named[0] if named else "")
    if chosen:
        at = chosen.find(name)
        rest = chosen[at + len(name) :]
        for pattern in (_APPOSITIVE, _RELATIVE):
            m = pattern.match(rest)
            if m and len(m.group(1).split()) >= 4:
                return _clip(m.group(1))
        intro = INTRO.search(chosen)
        line = chosen[intro.end() :].lstrip() if intro and intro.end() <= at + len(name) + 40 else chosen
        return _clip(_LEAD.sub("", line))
    prefix = title_prefix(title)
    if prefix:
        return _clip(" ".join(title.split())[len(prefix) :].lstrip(" :-–—"))
    intro_sent = next((s for s in sents if INTRO.search(s)), "")
    return _clip(_LEAD.sub("", intro_sent)) if intro_sent else ""


def contribution_of(doc: PaperText, model: ContributionModel | None = None) -> Contribution:
    """What ``doc`` introduces (the shipped model unless ``model`` is given)."""
    return decide(doc, model or shipped_model())[0]


def decide(doc: PaperText, m: ContributionModel) -> tuple[Contribution, Extracted]:
    """``doc``'s contribution and the candidates it was decided from (their mentions feed adoption counts)."""
    ex = extract_candidates(doc.title, doc.abstract)
    d = m.decide(ex, doc.categories)
    c = Contribution(
        doc_id=doc.id,
        introduces=d.introduces,
        name=d.name,
        also=d.also,
        kind=d.kind,
        area=d.area,
        builds_on=d.builds_on,
        changes=changes_line(doc.title, doc.abstract, d.name) if d.introduces else "",
        code=tuple(code_links(doc.abstract)) if d.introduces else (),
        score=d.score,
        kind_score=d.kind_score,
        model=m.version,
    )
    return c, ex


def contributions_of(docs: Iterable[PaperText], model: ContributionModel | None = None) -> Iterator[Contribution]:
    """``contribution_of`` for each document, lazily, with one model."""
    m = model or shipped_model()
    for doc in docs:
        yield contribution_of(doc, m)
