"""Tasks with verifiable rewards: a problem generator plus pure reward functions.

Every task writes prompts as plain character strings that end in "=" and expects the answer as
the completion, closed by the end-of-sequence token. Answers vary in length (1 to 4+ characters)
so that length effects (Dr. GRPO's "wrong answers grow longer") can show.

Reward functions follow TRL's signature: ``f(prompts, completions, completion_ids, **columns)``
returning one float per completion. ``correct`` gives 1.0 for a verified answer; ``format``
gives 0.1 for a completion that only uses the task's alphabet and stopped on its own.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from radar.repro.errors import ReproError

Example = dict[str, Any]


@dataclass(frozen=True)
class Task:
    """A frozen description of a task: how to make problems and how to check an answer."""

    name: str
    title: str
    alphabet: str  # every character prompts and answers may use
    answer_pattern: str  # a well-formed answer, anchored
    max_prompt_chars: int
    max_answer_chars: int
    make: Callable[[random.Random, int], Example]  # (rng, difficulty) -> {"prompt", "answer", ...}
    check: Callable[[Example, str], bool]

    def examples(self, n: int, seed: int, difficulty: int = 0) -> list[Example]:
        rng = random.Random(seed)
        return [self.make(rng, difficulty) for _ in range(n)]


# -- addition ---------------------------------------------------------------------------------------
def _make_addition(rng: random.Random, difficulty: int) -> Example:
    hi = 2 + difficulty  # tiny: 1-2 digit operands; small: up to 3-4 digits
    a = rng.randrange(10 ** rng.randint(1, hi))
    b = rng.randrange(10 ** rng.randint(1, hi))
    return {"prompt": f"{a}+{b}=", "answer": str(a + b)}


def _check_exact(example: Example, completion: str) -> bool:
    return completion.strip() == example["answer"]


# -- sorting ----------------------------------------------------------------------------------------
def _make_sorting(rng: random.Random, difficulty: int) -> Example:
    n = rng.randint(2, 5 + difficulty)
    digits = "".join(rng.choice("0123456789") for _ in range(n))
    return {"prompt": f"s{digits}=", "answer": "".join(sorted(digits))}


# -- countdown --------------------------------------------------------------------------------------
_EXPR = re.compile(r"^\d+([+\-*]\d+)*$")


def _make_countdown(rng: random.Random, difficulty: int) -> Example:
    """Numbers and a target reachable with + - * over a subset of them, each used at most once."""
    count = 3 + (difficulty > 0)
    nums = [rng.randint(1, 9 + 10 * difficulty) for _ in range(count)]
    used = rng.sample(nums, rng.randint(2, count))
    expr = str(used[0])
    for n in used[1:]:
        expr += rng.choice("+-*") + str(n)
    target = eval_expression(expr)  # the reference solution; any other valid expression also counts
    return {"prompt": f"{' '.join(map(str, nums))}>{target}=", "answer": expr, "numbers": nums, "target": target}


def eval_expression(expr: str) -> int:
    """Evaluate digits joined by + - * with the usual precedence, without eval()."""
    if not _EXPR.match(expr):
        raise ValueError(f"not an expression of digits and + - *: {expr!r}")
    terms: list[int] = []
    signs: list[int] = []
    for i, part in enumerate(re.split(r"([+\-])", expr)):
        if i % 2:
            signs.append(1 if part == "+" else -1)
            continue
        value = 1
        for factor in part.split("*"):
            value *= int(factor)
        terms.append(value)
    return terms[0] + sum(s * t for s, t in zip(signs, terms[1:], strict=True))


def _check_countdown(example: Example, completion: str) -> bool:
    text = completion.strip()
    if not _EXPR.match(text):
        return False
    pool = list(example["numbers"])
    for token in re.findall(r"\d+", text):
        if int(token) not in pool:
            return False
        pool.remove(int(token))
    return eval_expression(text) == example["target"]


TASKS: dict[str, Task] = {
    t.name: t
    for t in (
        Task("addition", "multi-digit addition", "0123456789+=", r"^\d+$", 10, 5, _make_addition, _check_exact),
        Task("sorting", "sort a digit string", "0123456789s=", r"^\d+$", 12, 10, _make_sorting, _check_exact),
        Task(
            "countdown",
            "reach a target with + - * over given numbers",
            "0123456789+-* >=",
            r"^\d+([+\-*]\d+)*$",
            20,
            12,
            _make_countdown,
            _check_countdown,
        ),
    )
}


def get_task(name: str) -> Task:
    try:
        return TASKS[name]
    except KeyError:
        raise ReproError(f"unknown task {name!r}; choose one of: {', '.join(TASKS)}") from None


# -- reward functions (TRL signature) ---------------------------------------------------------------
def correctness_reward(task: Task) -> Callable[..., list[float]]:
    """1.0 for a verified answer, else 0.0. Also logs mean completion length of right and wrong answers."""

    def correct(
        prompts: list[str], completions: list[str], completion_ids: list[list[int]], **cols: Any
    ) -> list[float]:
        keys = [k for k in cols if k not in ("trainer_state", "log_extra", "log_metric")]
        rows = [{k: cols[k][i] for k in keys} | {"prompt": p} for i, p in enumerate(prompts)]
        scores = [1.0 if task.check(row, c) else 0.0 for row, c in zip(rows, completions, strict=True)]
        log_metric = cols.get("log_metric")
        if log_metric is not None:
            right = [len(ids) for ids, s in zip(completion_ids, scores, strict=True) if s > 0]
            wrong = [len(ids) for ids, s in zip(completion_ids, scores, strict=True) if s == 0]
            if right:
                log_metric("completions/correct_length", sum(right) / len(right))
            if wrong:
                log_metric("completions/incorrect_length", sum(wrong) / len(wrong))
        return scores

    return correct


def format_reward(task: Task, eos_token_id: int, weight: float = 0.1) -> Callable[..., list[float]]:
    """`weight` for a completion that matches the task's answer pattern and ended with EOS (not cut off)."""
    pattern = re.compile(task.answer_pattern)

    def format(prompts: list[str], completions: list[str], completion_ids: list[list[int]], **_: Any) -> list[float]:  # noqa: A001
        return [
            weight if ids and ids[-1] == eos_token_id and pattern.match(c.strip()) else 0.0
            for c, ids in zip(completions, completion_ids, strict=True)
        ]

    return format
