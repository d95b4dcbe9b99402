"""What a card's paper says on the day it appears that bears on its consequence: the signals the consequence
model reads (``consequence.py``), each a string feature, with the words a lead reads for it.

Every signal is known when the paper is stored: its card (kind, area, the model's confidence, what it builds on,
its own code links), its title and abstract (what it builds on or replaces in the lab's stack, how it is
evaluated, what it releases, how general the change is), its arXiv categories, its authors where the record has
them, and its stored tags. Nothing here reads later papers; early uptake is the model's second term.

The lexicons are the lab's stack and the field's standard evaluations as the taxonomy and the lab name them
(../shared/labels/TAXONOMY.md), not names read off labeled answers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from radar.analysis.contributions.extract import plain_text

# the lab's stack: what a method builds on or replaces (RL post-training; training and inference systems)
STACK: dict[str, tuple[str, ...]] = {
    "grpo": ("grpo", "group relative policy"),
    "ppo": ("ppo", "proximal policy"),
    "dapo": ("dapo",),
    "reinforce": ("reinforce++", "reinforce", "rloo"),
    "dpo": ("dpo", "direct preference optimization"),
    "preference": ("preference optimization", "preference optimisation"),
    "rlhf": ("rlhf", "reinforcement learning from human feedback"),
    "rlvr": ("rlvr", "verifiable reward"),
    "reward model": ("reward model", "process reward", "prm", "verifier"),
    "policy optimization": ("policy optimization", "policy optimisation", "policy gradient"),
    "advantage": ("advantage estimat", "advantage function", "advantage normali", "advantage shaping", "advantages"),
    "clipping": ("clipping", "clip ", "importance sampling", "importance ratio", "trust region"),
    "entropy": ("entropy",),
    "flashattention": ("flashattention", "flash attention", "flash-attention"),
    "attention kernel": ("attention kernel", "sparse attention", "linear attention", "attention mechanism"),
    "vllm": ("vllm", "sglang", "tensorrt-llm"),
    "speculative decoding": ("speculative decoding", "speculative sampling", "draft model"),
    "kv cache": ("kv cache", "kv-cache", "key-value cache"),
    "low precision": ("fp8", "fp4", "mxfp", "nvfp4", "int4", "int8", "low-precision", "low-bit", "4-bit", "8-bit"),
    "quantization": ("quantization", "quantisation", "quantized"),
    "sparsity": ("pruning", "sparsity", "sparse"),
    "peft": ("lora", "low-rank adaptation", "parameter-efficient", "peft", "adapter"),
    "optimizer": ("optimizer", "adam", "muon", "learning rate"),
    "moe": ("mixture-of-experts", "mixture of experts", "moe"),
    "parallelism": ("tensor parallel", "pipeline parallel", "expert parallel", "data parallel", "sequence parallel"),
    "frameworks": ("megatron", "deepspeed", "fsdp", "verl", "openrlhf", "trl"),
    "kernel": ("kernel", "triton", "cuda", "gpu"),
    "serving": ("serving", "throughput", "latency"),
    "training": ("pre-training", "pretraining", "training efficiency", "memory footprint"),
}
# standard evaluations of the lab's two areas
BENCHMARKS = (
    "aime", "math-500", "math500", "gsm8k", "humaneval", "mmlu", "livecodebench", "swe-bench", "gpqa", "arena-hard",
    "alpacaeval", "mt-bench", "olympiadbench", "amc", "codeforces", "longbench", "ruler", "minerva",
)  # fmt: skip
# an application domain: the change serves one field, not the lab's training or serving
DOMAINS = (
    "medical", "clinical", "health", "patient", "radiology", "tabular", "recommend", "financ", "legal", "education",
    "student", "driving", "autonomous vehicle", "remote sensing", "satellite", "molecul", "protein", "drug",
    "chemi", "material", "weather", "traffic", "agricultur", "robot", "embodied", "navigation", "game",
    "point cloud", "3d ", "video", "image generation", "speech", "audio", "music", "gaussian splatting", "diffusion",
    "spiking", "optical", "quantum", "sensor", "iot", "wireless", "power grid", "energy system", "manufactur",
    "e-commerce", "advertis", "cyber", "security", "jailbreak", "backdoor", "fraud", "social media", "misinformation",
    "operations research", "scheduling problem", "biolog", "genom", "physics", "ecg", "eeg", "legal", "writing",
    "translation", "poetry", "story",
)  # fmt: skip
GENERAL = (
    "drop-in", "plug-and-play", "simple", "general", "universal", "any ", "minimal", "lightweight", "scalable",
    "stable", "stability", "orthogonal", "one line", "few lines", "without additional", "no additional",
    "off-the-shelf", "compatible with",
)  # fmt: skip
RELEASE = (
    "open-source", "open source", "opensource", "we release", "released", "publicly available", "code is available",
    "code and", "models and", "we open", "available at", "github.com", "huggingface.co",
)  # fmt: skip
SCALE = ("large-scale", "at scale", "production", "thousands of gpus", "trillion", "frontier", "industrial")
LLM = ("llm", "language model", "reasoning model", "transformer")
# organisations a record names among its authors (the records' author lists hold team names, e.g. "DeepSeek-AI")
ORGS = (
    "deepseek", "qwen", "minimax", "moonshot", "kimi", "bytedance", "seed", "google", "deepmind", "meta ai", "nvidia",
    "microsoft", "openai", "anthropic", "alibaba", "tencent", "baidu", "zhipu", "mistral", "allen institute",
    "stepfun", "xiaomi", "meituan",
)  # fmt: skip
_SIZE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s?[Bb](?![\w])")
_GAIN = re.compile(r"(\d+(?:\.\d+)?)\s?(?:x|×)(?![\w])", re.IGNORECASE)
_PCT = re.compile(r"(\d+(?:\.\d+)?)\s?%")
_GPUS = re.compile(r"\b(\d{2,5})\s+(?:[A-Z]\d{2,4}|GPUs?|accelerators|NPUs?|TPUs?)\b")
_WORD = re.compile(r"[a-z][a-z0-9\-]{2,}")
_PO_NAME = re.compile(r"[A-Z][A-Za-z0-9.\-]*PO")


def _split(text: str) -> list[str]:
    return text.split()


STOP = frozenset(
    _split(
        """
    the and for with that this from are our which these their its into than has have been can via over such while
    both also more most other using used based show shows propose proposed present paper approach method methods
    results new novel work performance model models large language llm llms data existing however across between
    each through without where when what how whether only achieve achieves significantly improve improves improved
    improving significant framework
        """
    )
)


@dataclass(frozen=True, slots=True)
class Paper:
    """What the signals read of one card's paper."""

    name: str
    kind: str
    area: str
    score: float  # the contributions model's P(introduces)
    named: bool  # False: a finding with no name (the card's handle comes from the title)
    title: str
    abstract: str
    code: tuple[str, ...]
    builds_on: tuple[str, ...]
    categories: tuple[str, ...]
    authors: tuple[str, ...]
    tags: tuple[str, ...]


def _bin(value: float, edges: Sequence[float]) -> int:
    return next((i for i, e in enumerate(edges) if value < e), len(edges))


def _any(text: str, words: Iterable[str]) -> bool:
    return any(w in text for w in words)


def stack_of(text: str) -> list[str]:
    """The parts of the lab's stack a (lower-cased, plain) text names, in ``STACK``'s order."""
    padded = f" {text} "
    # the substring test skips the calls for the spellings a text lacks (most of them)
    return [part for part, spellings in STACK.items() if any(s in padded and _names(padded, s) for s in spellings)]


def _names(text: str, spelling: str) -> bool:
    """``spelling`` in ``text`` as whole words (a short acronym must not match inside a word)."""
    at = text.find(spelling)
    while at >= 0:
        before = text[at - 1] if at else " "
        end = at + len(spelling)
        after = text[end] if end < len(text) else " "
        if not before.isalnum() and not (after.isalnum() and spelling[-1].isalnum()):
            return True
        at = text.find(spelling, at + 1)
    return False


def signals(p: Paper, *, words: bool = True) -> set[str]:
    """The string features of one card (``words``: also the title's and abstract's words, ``w:``)."""
    text = plain_text(f"{p.title}. {p.abstract}")
    low = text.lower()
    f = {f"area:{p.area}", f"kind:{p.kind}", f"ak:{p.area}:{p.kind}", f"intro:{_bin(p.score, (0.5, 0.8, 0.95))}"}
    if not p.named:
        f.add("unnamed")
    elif p.title.startswith(p.name):
        f.add("title_name")
    if _PO_NAME.fullmatch(p.name):
        f.add("name_po")
    if p.code:
        f.add("code")
    if _any(low, RELEASE):
        f.add("release")
    sizes = [float(x) for x in _SIZE.findall(text) if 0 < float(x) < 5000]
    f.add(f"size:{_bin(max(sizes), (3, 14, 70)) if sizes else 'none'}")
    if _any(low, SCALE) or any(int(n) >= 64 for n in _GPUS.findall(text)):
        f.add("scale")
    f.add(f"bench:{min(sum(_names(low, b) for b in BENCHMARKS), 3)}")
    gains = [float(x) for x in _GAIN.findall(text) if float(x) < 1000]
    if gains:
        f.add(f"gain:{_bin(max(gains), (1.5, 3, 10))}")
    pcts = [float(x) for x in _PCT.findall(text) if float(x) <= 100]
    if pcts:
        f.add(f"pct:{_bin(max(pcts), (5, 15, 40))}")
    stack = stack_of(low)
    f.update(f"stack:{s}" for s in stack)
    f.add(f"stack_n:{min(len(stack), 4)}")
    built = stack_of(" ".join(b.lower() for b in p.builds_on))
    f.update(f"builds:{s}" for s in built)
    if _any(low, GENERAL):
        f.add("general")
    f.add(f"domain:{min(sum(d in low for d in DOMAINS), 2)}")
    if _any(low, LLM):
        f.add("llm")
    if "survey" in low or "benchmark" in p.title.lower():
        f.add("survey_or_benchmark")
    f.add(f"authors:{_bin(len(p.authors), (1, 4, 9, 20))}")
    joined = " ".join(p.authors).lower()
    if _any(joined, ORGS):
        f.add("org_author")
    if p.categories:
        f.add(f"primary:{p.categories[0]}")
    f.update(f"cat:{c}" for c in p.categories if c.startswith("cs.") or c.startswith("stat."))
    f.update(f"tag:{t}" for t in p.tags)
    if words:
        f.update(f"w:{w}" for w in set(_WORD.findall(low)) if w not in STOP)
    return f
