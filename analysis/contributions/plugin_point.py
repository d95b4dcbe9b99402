"""Which plug-in point a new RL post-training method would need: the size of the work to reproduce it.

A GRPO-family method changes the run at one of three points (repro's plug-in points): the **advantage** (the group
baseline and normalisation, reward shaping within a group, credit assignment), the **ratio/loss** (the importance
ratio, clipping, the policy loss and its aggregation, entropy or KL terms), or the **batch** (which prompts,
responses or tokens train: sampling filters, curricula, replay, token selection). ``plugin_point`` reads a card's
title, its paper's abstract and its "what it changes" line and names the point its wording points at most strongly,
or "" when it names none (a reward model, an environment, an application) or the card is not an RL post-training
method. Keyword cues with weights, no model: the cues are phrases of the methods' own vocabulary, written from the
method families, not fitted to the labels it is measured on (benchmarks/bench_plugin_point.py, docs/methods.md).

Pure: strings in, a string out.
"""

from __future__ import annotations

import re

POINTS = ("advantage", "ratio/loss", "batch")
MIN_SCORE = 2.0  # a point needs at least one strong cue (or two weak ones)
_RL = re.compile(
    r"policy optimi[sz]ation|grpo|ppo\b|rlvr|reinforce\b|reinforce\+\+|policy gradient|reinforcement learn"
)
_CUES: dict[str, tuple[tuple[str, float], ...]] = {
    "advantage": (
        (r"advantage (?:estimat|function|normali[sz]|shaping|calibrat|momentum|design|reweight|collapse|vanish)", 2.5),
        (r"\badvantages?\b", 1.0),
        (r"\bbaseline\b(?! (?:method|model)s?\b)", 1.0),
        (r"reward (?:baseline|normali[sz]ation|transformation|adjustment|shaping)", 2.0),
        (r"normali[sz]e[sd]? (?:the )?rewards?", 2.0),
        (r"quantile|leave-one-out|kalman", 1.5),
        (r"credit assignment", 1.5),
        (r"pass@k", 1.0),
        (r"(?:difficulty|query)[- ]aware (?:advantage )?reweight|reweight(?:s|ing)? the advantage", 1.5),
        (r"zero[- ]variance|identical rewards|homogeneous", 1.0),
    ),
    "ratio/loss": (
        (r"\bclip(?:s|ping|ped)?\b", 2.0),
        (r"importance (?:sampling )?(?:ratio|weight)s?|\bis ratios?\b", 2.0),
        (r"trust region", 2.0),
        (r"surrogate (?:loss|objective)", 1.5),
        (r"loss aggregation|loss normali[sz]ation|token-level loss|length normali[sz]ation", 2.0),
        (r"policy loss|objective function|\bobjective\b", 0.7),
        (r"entropy (?:regulari[sz]|bonus|control)|entropy collapse", 1.0),
        (r"kl (?:penalty|divergence|regulari[sz])", 0.7),
        (r"covariance", 1.0),
        (r"gradient[- ]preserving|policy gradient of|gradient weights?", 1.0),
        (r"off-policy (?:correction|update)s?|prefix importance", 1.0),
    ),
    "batch": (
        (
            r"dynamic sampling|sampling strategy|(?:prompt|data|sample|query) selection"
            r"|select(?:s|ing)? (?:the )?samples",
            2.0,
        ),
        (r"curriculum", 2.5),
        (r"\bfilter(?:s|ing|ed)?\b", 1.5),
        (r"replay|experience buffer|memory bank|reus(?:e|ing) (?:past )?(?:experience|rollouts)", 2.0),
        (r"(?:high-entropy|minority|spurious|forking) tokens?|token selection|silenc", 2.0),
        (r"difficulty|too (?:easy|hard|difficult)", 0.7),
        (r"skip(?:s|ping)? |prun(?:e|ing) (?:prompts|samples|rollouts)", 1.0),
    ),
}


def _score(text: str) -> dict[str, float]:
    return {point: sum(w for pattern, w in cues if re.search(pattern, text)) for point, cues in _CUES.items()}


def plugin_point(title: str, abstract: str, changes: str = "", area: str = "rl-post-training") -> str:
    """The plug-in point (advantage, ratio/loss, batch) a card's method would need, or "" (none named, or not an RL
    post-training method). Ties go to the earlier point in the order the cues are strongest: the title and changes
    line count twice."""
    if area != "rl-post-training":
        return ""
    head = f"{title}. {changes}".lower()
    body = abstract.lower()
    if not _RL.search(f"{head} {body}"):
        return ""
    scores = {p: 2 * s + t for (p, s), t in zip(_score(head).items(), _score(body).values(), strict=True)}
    best = max(POINTS, key=lambda p: (scores[p], -POINTS.index(p)))
    return best if scores[best] >= MIN_SCORE else ""
