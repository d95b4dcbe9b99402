"""The plain rule baseline the learned model is measured against (``evaluate.py``).

Name: the title's prefix ("X: ..."), else the first name right after an introducing verb ("we propose X",
"we introduce Long Form (LF)"), else the paper introduces nothing. Kind and area: keyword rules. Builds on:
the name-like tokens that sit in a comparison ("outperforms X") or a lineage ("based on X").
"""

from __future__ import annotations

import re

from radar.analysis.contributions.extract import _PAREN, _SHORT_FORM, INTRO, extract, title_prefix
from radar.analysis.names.extract import _TOKEN, is_candidate

_KIND_RULES = (
    ("benchmark", re.compile(r"\b(?:benchmark|dataset|corpus|suite|leaderboard|testbed)s?\b", re.I)),
    ("hardware", re.compile(r"\b(?:accelerator|chip|FPGA|ASIC|hardware|processor|systolic)s?\b", re.I)),
    ("system", re.compile(r"\b(?:system|framework|library|engine|platform|toolkit|compiler|runtime)s?\b", re.I)),
    ("model", re.compile(r"\b(?:model family|foundation model|checkpoints?|technical report|\d+(?:\.\d+)?B)\b", re.I)),
)
_RL = re.compile(
    r"\b(?:reinforcement learning|RL|RLHF|RLVR|GRPO|PPO|DPO|reward models?|preference optimi[sz]ation|policy optimi[sz]"
    r"ation|post-training)\b",
    re.I,
)
_LLM = re.compile(r"\b(?:LLMs?|language models?|LRMs?|VLMs?|MLLMs?|reasoning models?)\b", re.I)
_HW = re.compile(
    r"\b(?:GPUs?|TPUs?|NPUs?|accelerators?|FPGAs?|ASICs?|kernels?|compilers?|serving|KV[- ]cache|quantiz\w*|"
    r"pruning|sparsity|inference latency|throughput|distributed training|parallelism|hardware)\b",
    re.I,
)


def rule_name(title: str, abstract: str) -> str:
    prefix = title_prefix(" ".join(title.split()))
    if prefix:
        return prefix
    abstract = " ".join(abstract.split())
    for m in INTRO.finditer(abstract):
        window = abstract[m.end() : m.end() + 160].split(". ")[0]
        paren = _PAREN.search(window)
        if paren and _SHORT_FORM.fullmatch(paren.group(1).strip()):
            return paren.group(1).strip()
        for t in _TOKEN.finditer(window):
            if is_candidate(t.group()):
                return t.group()
    return ""


def rule_kind(title: str, abstract: str, name: str) -> str:
    i = abstract.find(name) if name else -1
    near = title + " " + (abstract[i : i + 150] if i >= 0 else "")
    for kind, pattern in _KIND_RULES:
        if pattern.search(near):
            return kind
    return "method"


def rule_area(title: str, abstract: str) -> str:
    text = f"{title} {abstract}"
    llm = bool(_LLM.search(text))
    if llm and _RL.search(text):
        return "rl-post-training"
    if _HW.search(text):
        return "hardware-systems"
    return "other-llm" if llm else "other"


def rule_builds_on(title: str, abstract: str, name: str) -> tuple[str, ...]:
    ex = extract(title, abstract)
    return tuple(
        c.surface
        for c in ex.candidates
        if c.surface != name and ("compared" in c.features or "lineage" in c.features) and "src:token" in c.features
    )


def rule_decision(title: str, abstract: str) -> tuple[str, str, str, tuple[str, ...]]:
    """(name or '', kind or '', area, builds_on) by the rules."""
    name = rule_name(title, abstract)
    kind = rule_kind(title, abstract, name) if name else ""
    return name, kind, rule_area(title, abstract), rule_builds_on(title, abstract, name)
