"""Boundary features: what a bag of words cannot say about a paper, for the tag boundaries the taxonomy states.

The tag model is linear, so words count on their own: "reinforcement learning" pushes a paper towards
rl-policy-optimization whether a language model is in it or not, and "FPGA" pushes towards accelerator-hardware
whether the paper designs one or runs on one. Each boundary here counts, sentence by sentence (the title is one),
what happens together: a language-model term in the same sentence as training or RL, RL in a paper that names no
language model, a hardware term in a sentence of the paper's own work (we / our / this paper) with a design word,
or beside a deployment/measurement phrase. They are counts, log(1 + n), given to the text regression of the tags
that name the boundary in the taxonomy (``boundaries = [...]``); their weights are learned from the labels like
every other column's, so a feature decides nothing by itself (no override).

What each adds is measured per boundary in benchmarks/bench_tagging.py (docs/benchmarks.md, tags).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


def _rx(*alternatives: str, ignore_case: bool = True) -> re.Pattern[str]:
    """One pattern for the alternatives; a word boundary they all start with is tested once (twice as fast).
    Case-insensitive lexicons are compiled lower-cased and matched against lower-cased text (``Sentence.low``):
    faster than re.IGNORECASE. (Their patterns use no upper-case escapes such as \\B or \\S.)"""
    if ignore_case:
        alternatives = tuple(a.lower() for a in alternatives)
    if all(a.startswith(r"\b") for a in alternatives):
        return re.compile(r"\b(?:" + "|".join(f"(?:{a[2:]})" for a in alternatives) + ")")
    return re.compile("|".join(f"(?:{a})" for a in alternatives))


SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z$(\[])")
OWN = _rx(r"\b(?:we|our|us|here)\b", r"\bthis (?:paper|work|study|article|thesis|report)\b")
LANGUAGE_MODEL = _rx(
    r"\b(?:large )?(?:vision-)?language models?\b",
    r"\b(?:M|V)?LLMs?\b",
    r"\bVLMs?\b",
    r"\bLRMs?\b",
    r"\bSLMs?\b",
    r"\bLMs?\b",
    r"\bGPT",
    r"\bQwen",
    r"\bLlama",
    r"\bDeepSeek",
    r"\breasoning models?\b",
    r"\bagentic\b",
    r"\bfoundation models?\b",
    r"\btransformers?\b",
)
RL = _rx(
    r"\breinforcement learning\b",
    r"\bRL\b",
    r"\bGRPO\b",
    r"\bPPO\b",
    r"\bDAPO\b",
    r"\bRLOO\b",
    r"\bRLVR\b",
    r"\bRLHF\b",
    r"\bREINFORCE",
    r"\bpolicy (?:optimi[sz]ation|gradients?)\b",
    r"\bon-policy\b",
    r"\brewards?\b",
    r"\badvantages?\b",
    r"\brollouts?\b",
    ignore_case=False,
)
TRAINING = _rx(
    r"\btrain(?:s|ed|ing)?\b",
    r"\bfine-?tun",
    r"\bpost-?train",
    r"\boptimi[sz]e[sd]?\b",
    r"\balign(?:s|ed|ing|ment)?\b",
    r"\blearn(?:s|ed|ing)?\b",
    r"\bupdate",
)
NOT_LANGUAGE = _rx(  # where RL is classical: control, robots, games, networks, theory
    r"\brobot",
    r"\bcontrol(?:ler)?s?\b",
    r"\bUAVs?\b",
    r"\bdrones?\b",
    r"\bvehicles?\b",
    r"\btraffic\b",
    r"\benergy management\b",
    r"\bgames?\b",
    r"\bAtari\b",
    r"\bMuJoCo\b",
    r"\bMARL\b",
    r"\bmulti-agent reinforcement\b",
    r"\bMarkov decision\b",
    r"\bMDPs?\b",
    r"\bscheduling\b",
    r"\bmicrogrids?\b",
    r"\bspacecraft\b",
    r"\blocomotion\b",
    r"\bfederated\b",
    r"\bregret\b",
    r"\bbandits?\b",
    r"\bconvergence\b",
    r"\bsample complexity\b",
)
HARDWARE = _rx(
    r"\baccelerators?\b",
    r"\bFPGAs?\b",
    r"\bASICs?\b",
    r"\bNPUs?\b",
    r"\bTPUs?\b",
    r"\bGPUs?\b",
    r"\bchips?\b",
    r"\bhardware\b",
    r"\bprocessing-in-memory\b",
    r"\bin-memory comput",
    r"\bPIM\b",
    r"\bsystolic\b",
    r"\bchiplets?\b",
    r"\bcircuits?\b",
    r"\bSRAM\b",
    r"\bDRAM\b",
    r"\bHBM\b",
    r"\bmemristor",
    r"\bReRAM\b",
    r"\bRRAM\b",
    r"\bcrossbars?\b",
    r"\bneuromorphic\b",
    r"\bphotonic",
    r"\banalog\b",
    r"\bCAMs?\b",
    r"\barchitectures?\b",
    ignore_case=False,
)
DESIGN = _rx(
    r"\bpropos",
    r"\bdesign",
    r"\bpresent",
    r"\bintroduc",
    r"\bimplement",
    r"\bfabricat",
    r"\btape-?out",
    r"\bRTL\b",
    r"\bVerilog\b",
    r"\bsynthesi[sz]ed\b",
    r"\bmm\^?2\b",
    r"\bmm²",
    r"\b\d+\s?nm\b",
    r"\bCMOS\b",
    r"\barea\b",
    r"\bmicroarchitect",
    r"\bcycle-accurate\b",
    r"\bprocessing elements?\b",
    r"\bdataflow\b",
    r"\bon-chip\b",
    r"\bTOPS/W\b",
    r"\bsilicon\b",
    r"\bprototype",
    r"\bco-design",
    r"\bsimulat",
)
ONLY_USED = _rx(
    r"\bRaspberry Pi\b",
    r"\bJetson\b",
    r"\bedge devices?\b",
    r"\bsmartphones?\b",
    r"\bmobile (?:devices?|phones?)\b",
    r"\bcommodity\b",
    r"\bconsumer(?:-grade)?\b",
    r"\bdeploy",
    r"\bruns? on\b",
    r"\bprofil",
    r"\bmeasured on\b",
    r"\bon (?:an? |the |\w+ )?(?:NVIDIA|AMD|Intel|Apple|ARM|single|multiple|modern|existing)\b",
    r"\bA100s?\b",
    r"\bH100s?\b",
    r"\boff-the-shelf\b",
    r"\bexisting hardware\b",
    r"\bCPUs?\b",
    r"\bspeedups?\b",
    r"\blatency\b",
)
JUDGE = _rx(
    r"\bjudges?\b",
    r"\bverifiers?\b",
    r"\bcritics?\b",
    r"\brubrics?\b",
    r"\bevaluators?\b",
    r"\breward models?\b",
    r"\bPRMs?\b",
    r"\bORMs?\b",
    r"\breward (?:design|function|signal|shaping|hacking|over-?optimi[sz]ation)\b",
    r"\bLLM-as-a-judge\b",
    r"\bverification\b",
    r"\bscor(?:e|es|ing) (?:model|responses|outputs)\b",
)
PROPOSE = _rx(
    r"\bwe (?:propose|introduce|present|develop|design|train|build|construct)\b",
    r"\bpropos",
    r"\bintroduc",
    r"\bnovel\b",
    r"\bour\b",
)


@dataclass(frozen=True)
class Sentence:
    text: str  # as written: for the case-sensitive lexicons (RL, HARDWARE: acronyms)
    low: str  # lower-cased: for the others
    title: bool  # the paper's title
    own: bool  # says what this paper does (we / our / this paper), or is the title


def sentences(title: str, abstract: str) -> list[Sentence]:
    out = [Sentence(title, title.lower(), True, True)]
    for s in SENTENCE.split(abstract):
        if s:
            low = s.lower()
            out.append(Sentence(s, low, False, bool(OWN.search(low))))
    return out


def _language_model_training(doc: list[Sentence]) -> list[float]:
    """rl-policy-optimization: an LM is trained (with RL), or RL without any language model."""
    has_lm = [bool(LANGUAGE_MODEL.search(s.low)) for s in doc]
    has_rl = [bool(RL.search(s.text)) for s in doc]
    any_lm = any(has_lm)
    lm_trained = rl_own = rl_no_lm = rl_classical = 0
    for s, lm, rl in zip(doc, has_lm, has_rl, strict=True):
        lm_trained += lm and (rl or bool(TRAINING.search(s.low)))
        rl_own += rl and s.own and any_lm
        rl_no_lm += rl and not any_lm
        rl_classical += rl and bool(NOT_LANGUAGE.search(s.low))
    return [lm_trained, rl_own, rl_no_lm, rl_classical, sum(has_lm), sum(has_rl)]


def _hardware_proposed(doc: list[Sentence]) -> list[float]:
    """accelerator-hardware: hardware the paper designs, vs hardware it only runs on or measures."""
    proposed = used = titled = 0
    for s in doc:
        if not HARDWARE.search(s.text):
            continue
        design = bool(DESIGN.search(s.low))
        proposed += s.own and design
        used += bool(ONLY_USED.search(s.low)) and not design
        titled += s.title
    return [proposed, used, titled]


def _judge_contribution(doc: list[Sentence]) -> list[float]:
    """reward-modeling: a judge, verifier or reward model is what the paper contributes, vs one it uses."""
    contribution = background = with_rl = 0
    for s in doc:
        if not JUDGE.search(s.low):
            continue
        contribution += s.title or (s.own and bool(PROPOSE.search(s.low)))
        background += not s.own
        with_rl += bool(RL.search(s.text))
    return [contribution, background, with_rl]


@dataclass(frozen=True)
class Boundary:
    name: str
    columns: tuple[str, ...]
    counts: Callable[[list[Sentence]], list[float]]


BOUNDARIES = {
    b.name: b
    for b in (
        Boundary(
            "language-model-training",
            ("lm-trained", "rl-own-with-lm", "rl-without-lm", "rl-classical-domain", "lm", "rl"),
            _language_model_training,
        ),
        Boundary(
            "hardware-proposed", ("hardware-proposed", "hardware-only-used", "hardware-in-title"), _hardware_proposed
        ),
        Boundary("judge-contribution", ("judge-contributed", "judge-background", "judge-with-rl"), _judge_contribution),
    )
}


def boundary_matrix(names: Sequence[str], titles: Sequence[str], abstracts: Sequence[str]) -> np.ndarray:
    """log(1 + counts) of the named boundaries' columns, side by side in ``names``' order: (n, columns)."""
    chosen = [BOUNDARIES[n] for n in names]
    width = sum(len(b.columns) for b in chosen)
    out = np.zeros((len(titles), width), dtype=np.float32)
    if not chosen:
        return out
    for i, (title, abstract) in enumerate(zip(titles, abstracts, strict=True)):
        doc = sentences(title, abstract)
        out[i] = [c for b in chosen for c in b.counts(doc)]
    return np.log1p(out)
