"""The consequence score of a method card: how much a lab lead should care, known on the day the paper appears,
and sharpened by its early uptake once the card is weeks old.

Three logistic regressions over the day-0 signals of ``signals.py`` (stored as JSON, ``consequence.json``, never
pickled; ``version`` is a hash of the file and travels with every score):

- ``lead``: would a lead of this lab want it flagged at all? Fitted on the labeled introductions and the
  introductions the field later adopted (``adopted_dev``);
- ``must``: should a lead see it this week, or must they read it (the graded labels' priority 2 or 3)?
- ``adopt``: is it the kind of introduction frameworks take in? Fitted on the adopted introductions against the
  other introductions of their year in the corpus.

The day-0 score is ``logit(lead) + must_weight * logit(must) + adopt_weight * logit(adopt)``, less
``unnamed_penalty`` for a finding with no name (the listing shows the few best of hundreds such papers a week, so
their scores are the luckiest draws of many: the backtest's lead weeks put them first too often); a card of the
lab's areas a few weeks old adds ``early_weight * log(1 + uses)``, its uses being the later papers of its sense
that name it in its first ``EARLY_DAYS`` days (outside the lab's areas uptake moves nothing: a popular vision
model does not rise in the lab's list). Cards are ordered by that sum; the score shown is its logistic over the
number of terms.
Every weight is fitted on introductions before ``fitted_before`` and measured on what came after
(``benchmarks/backtest_consequence.py``).

Each score carries its evidence: the one or two signals that raised it most, in words.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from functools import cache, cached_property
from importlib import resources
from typing import ClassVar

import msgspec

from radar.analysis.contributions.labels import LAB_AREAS
from radar.analysis.contributions.linear import Linear, ModelFile, encode

CONSEQUENCE_FILE = "consequence.json"
REBUILD = "`python -m radar.analysis.contributions.retrain --consequence --db DIR/radar.db` (a full-corpus workspace)"
CODE_VERSION = "2"  # bump when signals change what a model means (2: unnamed penalty; early uptake in the lab's areas)
EARLY_DAYS = 28  # a card's early uptake: the papers naming it in its first four weeks


@dataclass(frozen=True, slots=True)
class Score:
    """One card's consequence: the score its list is ordered by, the day-0 part, and why."""

    score: float  # in (0, 1): ``ConsequenceModel.shown`` of the day-0 logit plus the early term (the list's order)
    day0: float  # the same without the early term
    early_uses: int  # later papers of its sense naming it in its first EARLY_DAYS days (as far as stored)
    evidence: tuple[str, ...]  # the one or two signals behind the rank, in words
    version: str
    day0_evidence: tuple[str, ...] = ()  # those behind the day-0 part (what a call decided on day 0 rests on)

    @property
    def line(self) -> str:
        """The score and its evidence in one line: '0.91: builds on GRPO; code released'."""
        why = "; ".join(self.evidence)
        return f"{self.score:.2f}" + (f": {why}" if why else "")


NO_SCORE = Score(0.0, 0.0, 0, (), "")


class ScoreJson(msgspec.Struct, frozen=True):
    """A card's ``consequence`` in its JSON: the scores to 4 places, the evidence behind the rank."""

    score: float
    day0: float
    early_uses: int
    evidence: list[str]
    version: str

    def __post_init__(self) -> None:  # on conversion from a ``Score`` (``msgspec.convert``, from its attributes)
        msgspec.structs.force_setattr(self, "score", round(self.score, 4))
        msgspec.structs.force_setattr(self, "day0", round(self.day0, 4))


def _version(data: bytes) -> str:
    return "q" + hashlib.sha256(data).hexdigest()[:12]


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z > -500 else 0.0


class ConsequenceModel(ModelFile, frozen=True):
    """The consequence model; ``consequence.json`` holds its fields (``linear.ModelFile``)."""

    WHAT: ClassVar[str] = "consequence model"
    REBUILD: ClassVar[str] = REBUILD

    lead: Linear
    must: Linear
    adopt: Linear
    must_weight: float
    adopt_weight: float
    early_weight: float
    fitted_before: str  # YYYY-MM-DD: every example it was fitted on was introduced before this day
    unnamed_penalty: float = 0.0  # subtracted from the day-0 logit of a card with no name
    code_version: str = CODE_VERSION

    @cached_property
    def version(self) -> str:
        """A hash of the model's file."""
        return _version(encode(self))

    @cached_property
    def day0_weights(self) -> dict[str, float]:
        """Each feature's weight in the day-0 logit, the three models' summed (``evidence``), for the features they
        weigh."""
        weighed = self.lead.weights.keys() | self.must.weights.keys() | self.adopt.weights.keys()
        return {f: self._weight(f) for f in weighed}

    def _weight(self, f: str) -> float:
        return (
            self.lead.weights.get(f, (0.0,))[0]
            + self.must_weight * self.must.weights.get(f, (0.0,))[0]
            + self.adopt_weight * self.adopt.weights.get(f, (0.0,))[0]
        )

    def day0_logit(self, features: Iterable[str]) -> float:
        fs = set(features)
        return (
            _logit(self.lead.probability(fs))
            + self.must_weight * _logit(self.must.probability(fs))
            + self.adopt_weight * _logit(self.adopt.probability(fs))
            - (self.unnamed_penalty if "unnamed" in fs else 0.0)
        )

    def early_term(self, features: Iterable[str], early_uses: int) -> float:
        """What a card's early uptake adds to its logit: only in the lab's areas."""
        fs = set(features)
        if early_uses <= 0 or not any(f"area:{a}" in fs for a in LAB_AREAS):
            return 0.0
        return self.early_weight * math.log1p(early_uses)

    def logit(self, features: Iterable[str], early_uses: int = 0) -> float:
        """The list's order: the day-0 logit plus the early term."""
        fs = set(features)
        return self.day0_logit(fs) + self.early_term(fs, early_uses)

    def score(self, features: Iterable[str], early_uses: int = 0) -> Score:
        fs = set(features)
        z0 = self.day0_logit(fs)
        early = self.early_term(fs, early_uses)
        day0 = self.evidence(fs)
        evidence = day0
        if early > 0:
            evidence = (f"{early_uses} paper{'s' if early_uses > 1 else ''} named it in its first 4 weeks", *day0)
        return Score(self.shown(z0 + early), self.shown(z0), early_uses, evidence[:2], self.version, day0)

    def evidence(self, features: Iterable[str], n: int = 2) -> tuple[str, ...]:
        """The ``n`` signals that raise the day-0 logit most, in words: what the paper does or claims first (builds
        on, releases, evaluates at scale), then its words, then its area and kind; features with no words are
        skipped."""
        gains: dict[str, tuple[int, float]] = {}
        for f in features:
            # a feature no model weighs (most of a card's words) weighs 0.0 in the sum as well
            w = self.day0_weights.get(f, 0.0)
            if not w > 0:
                continue
            words = in_words(f)
            if words:
                weak = f.startswith(("area:", "ak:", "kind:", "domain:", "intro:")) or f in ("llm", "title_name")
                tier = 2 if weak else 1 if f.startswith("w:") else 0
                gains[words] = min(gains.get(words, (tier, 0.0)), (tier, -w))
        return tuple(sorted(gains, key=lambda k: (gains[k], k))[:n])

    def shown(self, z: float) -> float:
        """The score a lead reads: the logistic of the summed logits over their count (the three models' odds
        averaged), in (0, 1); the order is the sum's."""
        return _sigmoid(z / (1.0 + self.must_weight + self.adopt_weight))


@cache
def shipped_consequence() -> ConsequenceModel:
    """The shipped consequence model (``consequence.json`` beside this module), read once."""
    data = resources.files("radar.analysis.contributions").joinpath(CONSEQUENCE_FILE).read_bytes()
    return ConsequenceModel.decode(data)


def early_uses(used_on: Iterable[str], introduced_on: str) -> int:
    """How many of a card's later papers (their days, YYYY-MM-DD) named it in its first ``EARLY_DAYS`` days."""
    try:
        start = date.fromisoformat(introduced_on[:10])
    except ValueError:
        return 0
    n = 0
    for day in used_on:
        try:
            if 0 <= (date.fromisoformat(day[:10]) - start).days <= EARLY_DAYS:
                n += 1
        except ValueError:
            continue
    return n


# -- the signals in words ----------------------------------------------------------------------------------
_AREAS = {"rl-post-training": "RL post-training", "hardware-systems": "hardware & systems"}
_SIZES = {"1": "evaluated on 3-14B models", "2": "evaluated on 14-70B models", "3": "evaluated on 70B+ models"}
_GAINS = {"2": "claims a 3-10x gain", "3": "claims a 10x+ gain", "1": "claims a 1.5-3x gain"}
_WORDS: Mapping[str, str] = {
    "code": "code released",
    "release": "releases code, data or weights",
    "scale": "run at scale",
    "general": "a general, drop-in change",
    "org_author": "a major lab among its authors",
    "title_name": "named in its title",
    "name_po": "a policy-optimization variant",
    "bench:2": "standard benchmarks",
    "bench:3": "standard benchmarks",
    "domain:0": "serves no single application field",
    "llm": "about language models",
}


STACK_WORDS: Mapping[str, str] = {
    "grpo": "GRPO", "ppo": "PPO", "dapo": "DAPO", "reinforce": "REINFORCE/RLOO", "dpo": "DPO",
    "preference": "preference optimization", "rlhf": "RLHF", "rlvr": "RLVR", "reward model": "reward models",
    "policy optimization": "policy optimization", "advantage": "the advantage estimate",
    "clipping": "the clipped ratio",
    "entropy": "entropy control", "flashattention": "FlashAttention", "attention kernel": "attention kernels",
    "vllm": "vLLM/SGLang", "speculative decoding": "speculative decoding", "kv cache": "the KV cache",
    "low precision": "low-precision formats", "quantization": "quantization", "sparsity": "sparsity",
    "peft": "LoRA/PEFT", "optimizer": "the optimizer", "moe": "mixture of experts", "parallelism": "parallelism",
    "frameworks": "Megatron/DeepSpeed/verl", "kernel": "GPU kernels", "serving": "serving", "training": "training",
}  # fmt: skip


def in_words(feature: str) -> str:
    """A signal as a lead reads it ('' for one that reads as nothing on its own, e.g. a plain word)."""
    head, _, rest = feature.partition(":")
    if feature in _WORDS:
        return _WORDS[feature]
    if head == "builds":
        return f"builds on {STACK_WORDS.get(rest, rest)}"
    if head == "stack":
        return f"about {STACK_WORDS.get(rest, rest)}"
    if head == "ak":
        area, _, kind = rest.partition(":")
        return f"{_AREAS[area]} {kind}" if area in _AREAS and kind else ""
    if head == "area":
        return _AREAS.get(rest, "")
    if head == "tag":
        return f"tagged {rest}"
    if head == "size":
        return _SIZES.get(rest, "")
    if head == "gain":
        return _GAINS.get(rest, "")
    if head == "w":
        return f"about {rest!r}" if len(rest) > 4 else ""
    return ""
