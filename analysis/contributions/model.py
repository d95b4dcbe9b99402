"""The learned parts of contributions, fitted on the shipped labels and stored as JSON (``model.json``).

Five logistic regressions (``linear.py``) over the features of ``features.py``:
- ``name``: is this candidate the paper's (main) name? The best-scoring candidate is the paper's name;
- ``introduces``: does the paper introduce it? Reads the paper's cues and the best candidate's evidence and
  score (scores cross-fitted on the training papers, so the model sees scores like those of unseen papers);
- ``kind`` (method, model, system, benchmark, hardware, other) of the introduced name;
- ``area`` (rl-post-training, hardware-systems, other-llm, other) of the paper;
- ``builds``: does the paper build on or compare against this other candidate?
plus the thresholds and a lexicon of labeled name kinds (the names stage's labels: GRPO is a method, LLM is
generic) that ``builds`` reads. ``version`` is a hash of the JSON: a stored contribution records it, and rows
of an older version are recomputed.

Rebuild the shipped model after changing features or labels: ``python -m radar.analysis.contributions.retrain``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from typing import ClassVar

from radar.analysis.contributions.extract import Candidate, Extracted, extract
from radar.analysis.contributions.features import (
    also_features,
    area_features,
    builds_features,
    head_kinds,
    intro_features,
    kind_features,
    lexicon_kind,
    name_features,
    survey_title,
)
from radar.analysis.contributions.labels import (
    LAB_AREAS,
    KindExample,
    LabeledPaper,
    Training,
    load_kind_examples,
    load_lexicon,
)
from radar.analysis.contributions.linear import Linear, ModelFile, encode, fit

MODEL_FILE = "model.json"
REBUILD = "`python -m radar.analysis.contributions.retrain`"
# what a paper cannot build on or compare against: where its code lies, an organisation, a metric, a common
# abbreviation (the names stage's labeled kinds; GitHub is labeled a system)
CODE_HOSTS = frozenset({"github", "gitlab", "hugging face", "huggingface", "zenodo", "bitbucket", "codeberg"})
NO_FOUNDATION_KINDS = frozenset({"org", "metric", "generic"})


def _no_foundation(surface: str, lexicon: Mapping[str, str]) -> bool:
    return surface.lower() in CODE_HOSTS or lexicon_kind(surface, lexicon) in NO_FOUNDATION_KINDS


# a parameter count as a part of a name: "-20B", " 7B", "8x7B", "/72B" (not JESD204B, not a dataset's "-3M")
PARAMETER_COUNT = re.compile(r"(?:^|[-_\s/(])(?:\d+x)?\d+(?:\.\d+)?[Bb](?=$|[-_\s/)])")
CODE_VERSION = "7"  # bump when extraction, features or rules change what a model means
INNER_FOLDS = 5
# P(introduces) at which a paper's best candidate is its introduction: 0.5 for every paper, lower in the lab's
# areas, where a missed method costs a lead more than a wrong card (grouped CV: docs/benchmarks.md, method cards)
THRESHOLD = 0.5
LAB_THRESHOLD = 0.3
# P(also introduced) of another candidate: 0.6 keeps nine in ten right (grouped CV: docs/benchmarks.md, method cards)
ALSO_THRESHOLD = 0.6


@dataclass(frozen=True, slots=True)
class Decision:
    """What the model decides about one paper."""

    introduces: bool
    score: float  # probability that the paper introduces ``name``
    name: str
    also: tuple[str, ...]
    kind: str
    kind_score: float
    area: str
    area_score: float
    builds_on: tuple[str, ...]
    candidate: Candidate | None  # the chosen candidate (its evidence), None when there is none


class ContributionModel(ModelFile, frozen=True):
    """The contributions model; ``model.json`` holds its fields (``linear.ModelFile``)."""

    WHAT: ClassVar[str] = "contributions model"
    REBUILD: ClassVar[str] = REBUILD

    name: Linear
    introduces: Linear
    kind: Linear
    area: Linear
    builds: Linear
    also: Linear
    threshold: float
    lab_threshold: float  # the threshold for papers of the lab's areas (recall matters most there)
    also_threshold: float
    builds_threshold: float
    lexicon: dict[str, str]  # lower-cased labeled name -> kind (the names stage's labels)
    code_version: str = CODE_VERSION

    @cached_property
    def version(self) -> str:
        """A hash of the model's file."""
        return "c" + hashlib.sha256(encode(self)).hexdigest()[:12]

    # -- deciding ---------------------------------------------------------------------------------------
    def rank(self, ex: Extracted) -> list[tuple[float, Candidate]]:
        scored = [(self.name.probability(name_features(c, ex.paper, self.lexicon)), c) for c in ex.candidates]
        scored.sort(key=lambda sc: (-sc[0], sc[1].start))
        return scored

    def decide(self, ex: Extracted, categories: Iterable[str] = ()) -> Decision:
        categories = tuple(categories)
        ranked = self.rank(ex)
        best_score, best = ranked[0] if ranked else (0.0, None)
        runner_up = ranked[1][0] if len(ranked) > 1 else 0.0
        score = self.introduces.probability(intro_features(ex, best, best_score, runner_up))
        area, area_score = self.area.predict(area_features(ex, categories))
        cut = self.lab_threshold if area in LAB_AREAS else self.threshold
        introduces = best is not None and score >= cut and not survey_title(ex)
        name, kind, kind_score = "", "", 0.0
        also: tuple[str, ...] = ()
        if introduces and best is not None:
            name = best.surface
            kind, kind_score = self.kind_of(ex, best, categories)
            others = [
                (self.also.probability(also_features(c, self.lexicon)), c)
                for _, c in ranked[1:]
                if c.surface not in name and name not in c.surface
            ]
            others.sort(key=lambda sc: (-sc[0], sc[1].start))
            also = tuple(c.surface for s, c in others if s >= self.also_threshold)[:3]
        skip = {name, *also}
        builds = tuple(
            c.surface
            for c in ex.candidates
            if c.surface not in skip
            and self.builds.probability(builds_features(c, self.lexicon, name)) >= self.builds_threshold
            and not _no_foundation(c.surface, self.lexicon)
        )
        return Decision(introduces, score, name, also, kind, kind_score, area, area_score, builds, best)

    def kind_of(self, ex: Extracted, c: Candidate, categories: Iterable[str] = ()) -> tuple[str, float]:
        """The kind of candidate ``c`` and the model's probability for it. What the paper calls it ("X: A ...
        Model", "X, a serving system", "the X algorithm") decides when that is one kind, not also a method."""
        kind, kind_score = self.kind.predict(kind_features(ex, c, categories))
        heads = head_kinds(ex, c)
        if len(heads) == 1 and "method" not in heads:
            kind = next(iter(heads))
        elif PARAMETER_COUNT.search(c.surface):
            kind = "model"  # GPT-OSS-20B, QwQ-32B, Moxin 7B: a name with its parameter count is a checkpoint
        return kind, kind_score


@cache
def shipped_model() -> ContributionModel:
    """The model fitted on the shipped labels (``model.json`` beside this module), read once."""
    data = resources.files("radar.analysis.contributions").joinpath(MODEL_FILE).read_bytes()
    return ContributionModel.decode(data)


# -- training ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Example:
    """A labeled paper with its extracted candidates."""

    paper: LabeledPaper
    ex: Extracted

    @property
    def group(self) -> str:
        return self.paper.label.week


def examples(papers: Sequence[LabeledPaper]) -> list[Example]:
    return [Example(p, extract(p.title, p.abstract)) for p in papers]


def _introducing_candidates(exs: Sequence[Example]) -> list[tuple[Candidate, Example]]:
    """Every candidate of the papers labeled as introducing something (what the name and also models learn from)."""
    return [(c, e) for e in exs if e.paper.label.introduces for c in e.ex.candidates]


def _name_rows(train: Sequence[Example], lexicon: Mapping[str, str]) -> tuple[list[set[str]], list[str]]:
    pairs = _introducing_candidates(train)
    rows = [name_features(c, e.ex.paper, lexicon) for c, e in pairs]
    return rows, ["yes" if c.surface == e.paper.label.name else "no" for c, e in pairs]


def _fit_name(train: Sequence[Example], lexicon: Mapping[str, str]) -> Linear:
    rows, ys = _name_rows(train, lexicon)
    return fit(rows, ys, c=0.5)


def _cross_fitted_best(
    train: Sequence[Example], lexicon: Mapping[str, str], folds: int = INNER_FOLDS
) -> list[tuple[float, Candidate | None, float]]:
    """Each training paper's best candidate, its score and the runner-up's, by a name model that did not see
    the paper."""
    out: list[tuple[float, Candidate | None, float]] = [(0.0, None, 0.0)] * len(train)
    for k in range(folds):
        inner = [e for i, e in enumerate(train) if i % folds != k]
        model = _fit_name(inner, lexicon)
        for i, e in enumerate(train):
            if i % folds != k:
                continue
            scored = [(model.probability(name_features(c, e.ex.paper, lexicon)), c) for c in e.ex.candidates]
            scored.sort(key=lambda sc: (-sc[0], sc[1].start))
            if scored:
                out[i] = (scored[0][0], scored[0][1], scored[1][0] if len(scored) > 1 else 0.0)
    return out


def _lexicon() -> dict[str, str]:
    return load_lexicon()


def fit_shipped(papers: Sequence[LabeledPaper], training: Training) -> ContributionModel:
    """The shipped model's fit: ``papers`` (the measured weeks, or those of them a fold keeps) and the training-only
    labels (``labels.load_training``; model.json is ``fit_shipped(load_labeled(), load_training())``)."""
    return train([*papers, *training.more], partial=training.partial)


def train(
    papers: Sequence[LabeledPaper],
    lexicon: Mapping[str, str] | None = None,
    kind_examples: Sequence[KindExample] | None = None,
    partial: Sequence[LabeledPaper] = (),
) -> ContributionModel:
    """Fit every part on ``papers`` (deterministic: the same papers give the same model).

    ``kind_examples``: more (paper, name, kind) examples for the kind model only (default: the shipped
    ``kinds_extra``); none of them may be one of ``papers``. ``partial``: papers labeled for what they introduce,
    its name, kind and area only (no builds-on, also or changes): they train those parts and no other."""
    ids = {p.label.doc_id for p in papers}
    partial_exs = examples([p for p in partial if p.label.doc_id not in ids])
    full_exs = examples(papers)
    exs = full_exs + partial_exs
    extra = load_kind_examples() if kind_examples is None else list(kind_examples)
    ids |= {p.label.doc_id for p in partial}
    extra = [k for k in extra if k.doc_id not in ids]
    lex = dict(_lexicon() if lexicon is None else lexicon)
    name = _fit_name(exs, lex)
    best = _cross_fitted_best(exs, lex)
    intro_rows = [intro_features(e.ex, c, s, r) for e, (s, c, r) in zip(exs, best, strict=True)]
    intro_y = [
        "yes" if e.paper.label.introduces and c is not None and c.surface == e.paper.label.name else "no"
        for e, (_, c, _) in zip(exs, best, strict=True)
    ]
    introduces = fit(intro_rows, intro_y, c=0.5)
    kind_rows, kind_y = [], []
    for e in exs:
        lab = e.paper.label
        c = next((c for c in e.ex.candidates if c.surface == lab.name), None)
        if lab.introduces and c is not None:
            kind_rows.append(kind_features(e.ex, c, e.paper.categories))
            kind_y.append(lab.kind)
    for k in extra:
        kex = extract(k.title, k.abstract)
        c = next((c for c in kex.candidates if c.surface == k.name), None)
        if c is not None:
            kind_rows.append(kind_features(kex, c, k.categories))
            kind_y.append(k.kind)
    kind = fit(kind_rows, kind_y, c=0.3)
    area = fit(
        [area_features(e.ex, e.paper.categories) for e in exs],
        [e.paper.label.area for e in exs],
        c=0.3,
        class_weight="balanced",
    )
    b_rows, b_y = [], []
    for e in full_exs:
        lab = e.paper.label
        skip = {lab.name, *lab.also}
        for c in e.ex.candidates:
            if c.surface in skip:
                continue
            b_rows.append(builds_features(c, lex, lab.name))
            b_y.append("yes" if c.surface in lab.builds_on else "no")
    builds = fit(b_rows, b_y, c=1.0, class_weight="balanced")
    others = [(c, e) for c, e in _introducing_candidates(full_exs) if c.surface != e.paper.label.name]
    a_y = ["yes" if c.surface in e.paper.label.also else "no" for c, e in others]
    also = fit([also_features(c, lex) for c, _ in others], a_y, c=0.5)
    return ContributionModel(
        name=name,
        introduces=introduces,
        kind=kind,
        area=area,
        builds=builds,
        also=also,
        threshold=THRESHOLD,
        lab_threshold=LAB_THRESHOLD,
        also_threshold=ALSO_THRESHOLD,
        builds_threshold=0.65,
        lexicon=lex,
    )
