"""A card's area as the lab's taxonomy draws it (../shared/labels/TAXONOMY.md), from the contributions model's
area, the paper's stored tags and what its text is about.

- The stored tags place a paper in one of the lab's two groups when the tagger has run (as before).
- Making training or inference of language models cheaper is the lab's systems area: a paper the model puts
  among other LLM work moves to ``hardware-systems`` when its text names such a technique (speculative decoding,
  sparse, linear or paged attention and attention kernels, KV caches, low-precision formats and quantization,
  LoRA and parameter-efficient fine-tuning, optimizer states, mixed precision, packing, fused kernels, MoE load
  balancing, linear RNNs and the delta rule) and what it makes cheaper (memory, latency, throughput, speed, FLOPs,
  cost).
- RL post-training is RL training of language models: a paper the model or its tags put there whose text names no
  RL training at all (LLM-FE: LLMs as evolutionary optimisers of tabular features) leaves it, and so does RL with no
  language model in its text (classical RL for control, games, networks or call centres: ``other``, as the
  taxonomy says: "Not: classical RL for robots, games or control with no language model").

The labeled introductions' areas follow their own guide (INTRODUCTIONS.md: PEFT and optimizers are other-llm
there), so the systems rule costs a little agreement with them; both figures are in docs/benchmarks.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from radar.analysis.contributions.extract import plain_text
from radar.analysis.contributions.labels import LAB_AREAS

RL = "rl-post-training"
SYSTEMS = "hardware-systems"
_EFFICIENCY = re.compile(
    r"\b(?:speculative (?:decoding|sampling)|(?:sparse|linear|flash|paged|block[- ]sparse) attention|"
    r"attention kernels?|flashattention|kv[- ]?cache|key-value cache|fp8|fp4|int4|mxfp\d?|nvfp4|"
    r"low[- ]precision|quantiz\w+|lora|low-rank adaptation|parameter[- ]efficient fine-tuning|peft|optimizer "
    r"states?|mixed[- ]precision|sequence packing|fused kernels?|triton|kernel fusion|load[- ]balanc\w+ "
    r"(?:loss|strategy)|delta rule|linear rnns?)\b",
    re.IGNORECASE,
)
_CHEAPER = re.compile(
    r"\b(?:memory|latency|throughput|speed[- ]?ups?|faster|accelerat\w+|efficien\w+|flops|cost|compute[- ]"
    r"(?:efficient|budget)|inference time|training time|bandwidth|\d+(?:\.\d+)?\s?(?:x|×))",
    re.IGNORECASE,
)
_RL_TRAINING = re.compile(
    r"\b(?:grpo|ppo|dapo|rloo|reinforce\+*|rlhf|rlvr|rlaif|dpo|reinforcement learning|policy optimi[sz]ation|"
    r"policy gradient|reward model\w*|verifiable rewards?|preference optimi[sz]ation|rl)\b",
    re.IGNORECASE,
)


_LANGUAGE = re.compile(
    r"\b(?:(?:large )?language models?|llms?|lms|vlms?|mllms?|lrms?|slms?|reasoning models?|reasoners?|gpt[-\w.]*|"
    r"qwen[-\w.]*|llama[-\w.]*|deepseek[-\w.]*|chatbots?|chain[- ]of[- ]thought|instruction[- ]tun\w*|rlhf|rlvr|"
    r"post-training|alignment|text generation|vision-language|multimodal models?|foundation models?|agentic|"
    r"retrieval-augmented|rag|grpo|dapo|gspo|rloo|verifiable rewards?|reasoning|math(?:-?500)?|aime\d*|gsm8k|"
    r"tokens?|prompts?|responses?)\b",
    re.IGNORECASE,
)


def card_area(
    model_area: str,
    tags: Iterable[str],
    groups: Mapping[str, str] | None,
    title: str,
    abstract: str,
) -> str:
    """The card's area: the stored tags' lab group, else the model's area; an RL post-training call on a text that
    names no RL training is the model's other area (other-llm when the model said RL post-training), one that names
    no language model is ``other``; other LLM work
    whose text names making training or inference cheaper (``_EFFICIENCY`` and ``_CHEAPER``) is the systems
    area."""
    from_tags = ""
    if groups:
        found = {groups.get(t, "") for t in tags}
        from_tags = next((a for a in LAB_AREAS if a in found), "")
    area = from_tags or model_area
    text = plain_text(f"{title}. {abstract}")
    if area == RL and not _LANGUAGE.search(text):
        return "other"
    if area == RL and not _RL_TRAINING.search(text):
        return model_area if model_area != RL else "other-llm"
    if area == "other-llm" and _EFFICIENCY.search(text) and _CHEAPER.search(text):
        return SYSTEMS
    return area
