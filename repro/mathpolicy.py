"""The policy side of a real-checkpoint run: prompts through the tokenizer's chat template, the
math rewards on token ids, and held-out scoring with the same rule.

Prompts: when the tokenizer has a chat template the prompt is one user message (TRL applies the
template with ``add_generation_prompt``; held-out scoring does the same); otherwise the plain text.
``PROMPT_SUFFIX`` asks for a boxed answer unless the prompt already names a format.

Rewards score the token ids, as the toy tasks do: a completion counts only when it stopped on an
end-of-sequence token (the tokenizer's EOS or any of the generation config's) and holds no other
special token before it; then ``correct`` gives 1.0 when its final answer (repro/mathreward.py) is
equivalent to the reference and ``format`` gives 0.1 when it states the answer explicitly
(``\\boxed{}``, ``####`` or "the answer is").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from radar.repro.errors import ReproError
from radar.repro.mathreward import equivalent, final_answer, has_final_marker
from radar.repro.shapes import Example

PROMPT_SUFFIX = "\nPut your final answer within \\boxed{}."
FORMAT_WEIGHT = 0.1


def user_text(prompt: str) -> str:
    low = prompt.lower()
    return prompt if ("boxed" in low or "####" in prompt or "final answer" in low) else prompt + PROMPT_SUFFIX


def has_chat_template(tokenizer: Any) -> bool:
    return bool(getattr(tokenizer, "chat_template", None))


def trl_prompt(prompt: str, tokenizer: Any) -> Any:
    """The dataset's prompt column for TRL: conversational when the tokenizer has a chat template."""
    text = user_text(prompt)
    return [{"role": "user", "content": text}] if has_chat_template(tokenizer) else text


def prompt_ids(prompt: str, tokenizer: Any) -> list[int]:
    """Token ids of a prompt exactly as TRL builds them (chat template + generation prompt, or plain)."""
    if has_chat_template(tokenizer):
        out = tokenizer.apply_chat_template(
            [{"role": "user", "content": user_text(prompt)}], add_generation_prompt=True, tokenize=True
        )
        ids = out["input_ids"] if isinstance(out, dict) or hasattr(out, "keys") else out
        return [int(i) for i in ids]
    return [int(i) for i in tokenizer(user_text(prompt))["input_ids"]]


def eos_ids(tokenizer: Any, gen: Any = None) -> frozenset[int]:
    """The tokenizer's EOS plus the generation config's ``eos_token_id`` (an int or a list: chat
    models stop on e.g. <|im_end|>)."""
    ids = {int(tokenizer.eos_token_id)} if tokenizer.eos_token_id is not None else set()
    if isinstance(gen, int):
        ids.add(gen)
    elif isinstance(gen, list | tuple):
        ids.update(int(i) for i in gen)
    return frozenset(ids)


def completion_text(
    ids: list[int], eos: frozenset[int], specials: frozenset[int], decode: Callable[[list[int]], str]
) -> str | None:
    """The text of a completion that stopped on an EOS with no other special token before it, else None."""
    for i, t in enumerate(ids):
        if t in eos:
            body = ids[:i]
            return None if any(b in specials for b in body) else decode(body)
    return None  # truncated: no EOS within the budget


def reward_functions(tokenizer: Any, eos: frozenset[int]) -> list[Callable[..., list[float]]]:
    specials = frozenset(int(i) for i in tokenizer.all_special_ids)

    def decode(ids: list[int]) -> str:
        return str(tokenizer.decode(ids, skip_special_tokens=False))

    def correct(
        prompts: list[Any], completions: list[Any], completion_ids: list[list[int]], **cols: Any
    ) -> list[float]:
        answers = cols["answer"]
        texts = [completion_text(list(ids), eos, specials, decode) for ids in completion_ids]
        return [
            1.0 if t is not None and equivalent(final_answer(t), str(a)) else 0.0
            for t, a in zip(texts, answers, strict=True)
        ]

    def format(prompts: list[Any], completions: list[Any], completion_ids: list[list[int]], **_: Any) -> list[float]:  # noqa: A001
        texts = [completion_text(list(ids), eos, specials, decode) for ids in completion_ids]
        return [FORMAT_WEIGHT if t is not None and has_final_marker(t) else 0.0 for t in texts]

    return [correct, format]


@torch.no_grad()
def math_accuracy(
    model: Any,
    tokenizer: Any,
    rows: list[Example],
    *,
    max_new_tokens: int,
    batch: int,
    greedy: bool = True,
    samples: int = 1,
) -> float:
    """Share of held-out rows answered correctly (greedy, or the mean over ``samples`` draws at T = 1),
    scored on the token ids with the rewards' rule."""
    if not rows:
        return 0.0
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    eos = eos_ids(tokenizer, getattr(getattr(model, "generation_config", None), "eos_token_id", None))
    specials = frozenset(int(i) for i in tokenizer.all_special_ids)
    if not eos:  # a completion counts only when it stops on an end-of-sequence token: none means none can count
        raise ReproError(
            "the checkpoint's tokenizer has no end-of-sequence token (eos_token in tokenizer_config.json or "
            "eos_token_id in generation_config.json); set one and run again"
        )
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else min(eos)
    encoded = [prompt_ids(r["prompt"], tokenizer) for r in rows]
    right = total = 0
    for _ in range(1 if greedy else samples):
        for start in range(0, len(rows), batch):
            chunk = encoded[start : start + batch]
            width = max(map(len, chunk))
            ids = torch.full((len(chunk), width), pad, dtype=torch.long)
            att = torch.zeros((len(chunk), width), dtype=torch.long)
            for i, seq in enumerate(chunk):  # left padding
                ids[i, width - len(seq) :] = torch.tensor(seq)
                att[i, width - len(seq) :] = 1
            out = model.generate(
                input_ids=ids.to(device),
                attention_mask=att.to(device),
                max_new_tokens=max_new_tokens,
                **(
                    {"do_sample": False}
                    if greedy
                    else {"do_sample": True, "temperature": 1.0, "top_k": 0, "top_p": 1.0}
                ),
                pad_token_id=pad,
                eos_token_id=sorted(eos),
            )
            for row, gen in zip(rows[start : start + batch], out[:, width:].tolist(), strict=True):
                text = completion_text(gen, eos, specials, lambda x: str(tokenizer.decode(x)))
                right += text is not None and equivalent(final_answer(text), str(row["answer"]))
                total += 1
    if was_training:
        model.train()
    return right / total if total else 0.0
