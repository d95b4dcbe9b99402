"""Tasks with verifiable rewards: a problem generator plus pure reward functions.

Every task writes prompts as plain character strings that end in "=" and expects the answer as
the completion, closed by the end-of-sequence token. ``addition-work`` is the task where length is a
choice: its warm start learns to answer either tersely ("125") or with column-by-column working
("7+8=15;5+6+1=12;>125", up to 20 characters), so completion lengths differ within a group and
between right and wrong answers, and DAPO's soft overlong buffer (the last ``overlong_buffer`` tokens
of its 24-token budget) touches the long answers. On the other tasks answers are 1-12 characters and
the budget leaves room beyond the longest one.

Held out by construction: each problem has a canonical key (addition: the unordered operands;
sorting: the multiset of digits; countdown: the numbers and the target) and a hash of that key puts
it in exactly one part: ``sft`` (warm start), ``rl`` (the RL prompt stream) or ``eval`` (held-out
scores). ``Task.examples(..., part=...)`` draws only from its part, so an evaluation prompt (or any
reordering of it) can never occur in training; the runner still measures the overlap. Held-out sets are
distinct *problems* (by canonical key, so "3+4" and "4+3" count once), and the set "one difficulty up"
holds only problems the training difficulty cannot draw (``fits``), so it is out of distribution.

Reward functions follow TRL's signature: ``f(prompts, completions, completion_ids, **columns)``
returning one float per completion. They score the token ids, not TRL's decoded text (which drops
special tokens): a completion counts only when it ends with EOS and holds no other special token
(``<pad><pad>14<eos>`` earns nothing). ``correct`` gives 1.0 for a verified answer; ``format``
gives 0.1 for a well-formed answer that stopped on its own.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from radar.repro.errors import ReproError
from radar.repro.shapes import Example


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
    key: Callable[[Example], str]  # the canonical problem: every reordering of one problem shares it
    max_completion_tokens: int  # generation budget: room beyond the longest answer for length effects
    fits: Callable[[Example, int], bool]  # can the generator draw this problem at that difficulty?
    overlong_buffer: int = 0  # DAPO's soft overlong buffer (tokens); 0 = the budget beyond the longest answer

    @property
    def buffer(self) -> int:
        """DAPO's soft overlong buffer: the last tokens of the budget where the punishment acts."""
        return self.overlong_buffer or self.max_completion_tokens - (self.max_answer_chars + 1)

    def part(self, example: Example) -> str:
        """'sft', 'rl' or 'eval', fixed by a hash of the problem's canonical key."""
        return part_of(self.name + ":" + self.key(example))

    def examples(self, n: int, seed: int, difficulty: int = 0, part: str = "rl") -> list[Example]:
        """``n`` problems of one part of the problem space (repeats allowed), deterministic in ``seed``."""
        if part not in PARTS:
            raise ReproError(f"unknown part {part!r}; choose one of: {', '.join(PARTS)}")
        rng = random.Random(seed)
        out: list[Example] = []
        tries = 0
        while len(out) < n:
            ex = self.make(rng, difficulty)
            tries += 1
            if self.part(ex) == part:
                out.append(ex)
            elif tries > 50 * n + 1000:
                raise ReproError(f"task {self.name} has too few {part} problems at difficulty {difficulty}")
        return out

    def eval_set(self, n: int, difficulty: int = 0, seed: int = 999_999, beyond: int | None = None) -> list[Example]:
        """Up to ``n`` distinct held-out problems (by canonical key: a reordering is the same problem); fewer
        when the eval part holds fewer at this difficulty (sorting's has about 750). ``beyond``: only problems
        that difficulty ``beyond`` cannot draw (the out-of-distribution set)."""
        rng = random.Random(seed)
        seen: dict[str, Example] = {}
        tries = since_new = 0
        while len(seen) < n and tries < 400 * n and since_new < EVAL_PATIENCE:
            ex = self.make(rng, difficulty)
            tries += 1
            since_new += 1
            if beyond is not None and self.fits(ex, beyond):
                continue
            key = self.key(ex)
            if key not in seen and self.part(ex) == "eval":
                seen[key] = ex
                since_new = 0
        return list(seen.values())


EVAL_PATIENCE = 20_000  # a held-out set stops growing after this many draws bring no new problem


def rl_stream(task: Task, n: int, seed: int, difficulty: int) -> list[Example]:
    """The RL prompt stream of one arm's RL seed (the runner regenerates it to measure overlap)."""
    return task.examples(n, seed=10_000 + seed, difficulty=difficulty, part="rl")


def refill_stream(task: Task, n: int, seed: int, difficulty: int) -> list[Example]:
    """The prompts dynamic sampling draws to replace filtered groups (RL part, its own seed): at most ``n``."""
    return task.examples(n, seed=30_000 + seed, difficulty=difficulty, part="rl")


# The problem space split: shares of the hash range (1000 buckets) for each part.
PARTS = {"eval": (0, 250), "sft": (250, 600), "rl": (600, 1000)}


def part_of(key: str) -> str:
    bucket = int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big") % 1000
    return next(name for name, (lo, hi) in PARTS.items() if lo <= bucket < hi)


# -- addition ---------------------------------------------------------------------------------------
def _make_addition(rng: random.Random, difficulty: int) -> Example:
    hi = 2 + difficulty  # tiny: 1-2 digit operands; small: up to 3-4 digits
    a = rng.randrange(10 ** rng.randint(1, hi))
    b = rng.randrange(10 ** rng.randint(1, hi))
    return {"prompt": f"{a}+{b}=", "answer": str(a + b)}


def _key_addition(example: Example) -> str:
    return "+".join(sorted(example["prompt"].rstrip("=").split("+"), key=int))


def _fits_addition(example: Example, difficulty: int) -> bool:
    return all(len(x) <= 2 + difficulty for x in example["prompt"].rstrip("=").split("+"))


def working(a: int, b: int) -> str:
    """Column-by-column working of a + b, least significant column first, then ">" and the sum:
    57+68 -> "7+8=15;5+6+1=12;>125"."""
    xs, ys = str(a)[::-1], str(b)[::-1]
    carry, steps = 0, []
    for i in range(max(len(xs), len(ys))):
        x, y = int(xs[i]) if i < len(xs) else 0, int(ys[i]) if i < len(ys) else 0
        total = x + y + carry
        steps.append(f"{x}+{y}{'+1' if carry else ''}={total};")
        carry = total // 10
    return "".join(steps) + ">" + str(a + b)


def _make_addition_work(rng: random.Random, difficulty: int) -> Example:
    """Addition whose SFT target is, at random, the bare sum or its working (``working``)."""
    ex = _make_addition(rng, difficulty)
    a, b = (int(x) for x in ex["prompt"].rstrip("=").split("+"))
    return ex | {"sft_answer": working(a, b) if rng.random() < 0.5 else ex["answer"]}


_WORK = re.compile(r"^(?:\d\+\d(?:\+1)?=\d{1,2};)+>(\d+)$|^(\d+)$")


def _check_work(example: Example, completion: str) -> bool:
    """The stated sum (after the last ">", or the whole answer when terse) is right; the working must be
    well-formed but is not itself checked (as a math grader checks only the final answer)."""
    m = _WORK.match(completion.strip())
    return m is not None and (m.group(1) or m.group(2)) == example["answer"]


def _check_exact(example: Example, completion: str) -> bool:
    return completion.strip() == example["answer"]


# -- sorting ----------------------------------------------------------------------------------------
def _make_sorting(rng: random.Random, difficulty: int) -> Example:
    n = rng.randint(2, 5 + difficulty)
    digits = "".join(rng.choice("0123456789") for _ in range(n))
    return {"prompt": f"s{digits}=", "answer": "".join(sorted(digits))}


def _key_sorting(example: Example) -> str:
    return "".join(sorted(example["prompt"][1:].rstrip("=")))


def _fits_sorting(example: Example, difficulty: int) -> bool:
    return 2 <= len(example["prompt"]) - 2 <= 5 + difficulty


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


def _key_countdown(example: Example) -> str:
    return ",".join(map(str, sorted(example["numbers"]))) + ">" + str(example["target"])


def _fits_countdown(example: Example, difficulty: int) -> bool:
    nums = example["numbers"]
    return len(nums) == 3 + (difficulty > 0) and max(nums) <= 9 + 10 * difficulty


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
        Task(
            "addition",
            "multi-digit addition",
            "0123456789+=",
            r"^\d+$",
            10,
            5,
            _make_addition,
            _check_exact,
            _key_addition,
            16,
            _fits_addition,
        ),
        Task(
            "addition-work",
            "multi-digit addition, answered tersely or with column-by-column working (length is a choice)",
            "0123456789+=;>",
            _WORK.pattern,
            10,
            20,
            _make_addition_work,
            _check_work,
            _key_addition,
            24,
            _fits_addition,
            overlong_buffer=8,
        ),
        Task(
            "sorting",
            "sort a digit string",
            "0123456789s=",
            r"^\d+$",
            12,
            10,
            _make_sorting,
            _check_exact,
            _key_sorting,
            24,
            _fits_sorting,
        ),
        Task(
            "countdown",
            "reach a target with + - * over given numbers",
            "0123456789+-* >=",
            r"^\d+([+\-*]\d+)*$",
            20,
            12,
            _make_countdown,
            _check_countdown,
            _key_countdown,
            24,
            _fits_countdown,
        ),
    )
}


def get_task(name: str) -> Task:
    try:
        return TASKS[name]
    except KeyError:
        raise ReproError(f"unknown task {name!r}; choose one of: {', '.join(TASKS)}") from None


# -- reward functions (TRL signature) ---------------------------------------------------------------
def answer_of(
    ids: list[int], eos_token_id: int, special_ids: frozenset[int], decode: Callable[[list[int]], str]
) -> str | None:
    """The answer text of a completion's token ids, or None when it does not count: no EOS at the end,
    or a special token (pad, unk, an early EOS) inside. Generated ids past the first EOS are ignored."""
    if eos_token_id in ids:
        ids = ids[: ids.index(eos_token_id) + 1]
    if not ids or ids[-1] != eos_token_id or any(t in special_ids for t in ids[:-1]):
        return None
    return decode(ids[:-1])


def correctness_reward(
    task: Task, eos_token_id: int, special_ids: frozenset[int], decode: Callable[[list[int]], str]
) -> Callable[..., list[float]]:
    """1.0 for a verified answer that ended with EOS and holds no special token, else 0.0. Also logs
    the mean completion length (tokens, EOS included) of right and wrong answers."""

    def correct(
        prompts: list[str], completions: list[str], completion_ids: list[list[int]], **cols: Any
    ) -> list[float]:
        keys = [k for k in cols if k not in ("trainer_state", "log_extra", "log_metric")]
        # TRL hands back the data set's columns (the Examples' own fields) one list per column
        rows = [cast(Example, {k: cols[k][i] for k in keys} | {"prompt": p}) for i, p in enumerate(prompts)]
        answers = [answer_of(list(ids), eos_token_id, special_ids, decode) for ids in completion_ids]
        scores = [1.0 if a is not None and task.check(row, a) else 0.0 for row, a in zip(rows, answers, strict=True)]
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


def format_reward(
    task: Task,
    eos_token_id: int,
    special_ids: frozenset[int],
    decode: Callable[[list[int]], str],
    weight: float = 0.1,
) -> Callable[..., list[float]]:
    """`weight` for a completion that matches the task's answer pattern, ended with EOS and holds no
    special token inside."""
    pattern = re.compile(task.answer_pattern)

    def format(prompts: list[str], completions: list[str], completion_ids: list[list[int]], **_: Any) -> list[float]:  # noqa: A001
        answers = [answer_of(list(ids), eos_token_id, special_ids, decode) for ids in completion_ids]
        return [weight if a is not None and pattern.match(a) else 0.0 for a in answers]

    return format
