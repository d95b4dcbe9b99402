"""Task generators, verifiers and reward functions; the char-level tokenizer."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
import torch

from radar.repro.plots import end_difference, paired_difference, plot_run
from radar.repro.policy import EVAL_PROMPTS, accuracy, build_model, build_tokenizer, eval_sets, get_size, special_ids
from radar.repro.shapes import ArmRun
from radar.repro.tasks import (
    PARTS,
    TASKS,
    correctness_reward,
    eval_expression,
    format_reward,
    get_task,
    refill_stream,
    rl_stream,
    working,
)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_reference_answers_are_correct_and_vary_in_length(name: str) -> None:
    task = get_task(name)
    examples = task.examples(300, seed=1)
    assert all(task.part(ex) == "rl" for ex in examples)
    assert all(task.check(ex, ex["answer"]) and task.check(ex, ex.get("sft_answer", ex["answer"])) for ex in examples)
    assert len({len(ex.get("sft_answer", ex["answer"])) for ex in examples}) >= 2
    assert all(
        len(ex["prompt"]) <= task.max_prompt_chars and len(ex.get("sft_answer", ex["answer"])) <= task.max_answer_chars
        for ex in examples
    )
    assert all(set(ex["prompt"] + ex.get("sft_answer", ex["answer"])) <= set(task.alphabet) for ex in examples)
    assert 0 < task.buffer < task.max_completion_tokens
    assert task.examples(5, seed=1) == task.examples(5, seed=1)


def test_countdown_accepts_any_valid_expression_and_rejects_reuse() -> None:
    task = get_task("countdown")
    ex = {"prompt": "2 3 4>10=", "numbers": [2, 3, 4], "target": 10, "answer": "2*3+4"}
    assert task.check(ex, "4+2*3")
    assert task.check(ex, "2+4*2") is False  # 2 used twice
    assert task.check(ex, "2*5") is False  # 5 not given
    assert task.check(ex, "2*3+") is False
    assert eval_expression("2+3*4-5") == 9


@pytest.mark.parametrize("name", sorted(TASKS))
def test_problem_space_is_split_so_evaluation_never_meets_training(name: str) -> None:
    """SFT, RL (and dynamic sampling's refill) and evaluation problems come from disjoint parts of the problem
    space, by canonical key (a reordering of a problem is the same problem)."""
    task, size = get_task(name), get_size("tiny")
    sets = eval_sets(task, size)
    eval_keys = {task.key(e) for e in sets["eval"]} | {task.key(e) for e in sets["ood"]}
    sft = task.examples(20_000, seed=7, difficulty=size.difficulty, part="sft")
    rl = rl_stream(task, 20_000, 0, size.difficulty) + refill_stream(task, 5_000, 0, size.difficulty)
    assert not eval_keys & {task.key(e) for e in sft}
    assert not eval_keys & {task.key(e) for e in rl}
    assert not {task.key(e) for e in sft} & {task.key(e) for e in rl}
    assert {task.part(e) for e in sets["eval"]} == {"eval"} and set(PARTS) == {"eval", "sft", "rl"}
    assert task.eval_set(50) == task.eval_set(50)  # the same held-out set for every run


@pytest.mark.parametrize("name", sorted(TASKS))
def test_held_out_sets_are_distinct_problems_and_the_harder_one_is_out_of_distribution(name: str) -> None:
    """The held-out set counts problems, not prompts: "3+4=" and "4+3=" are one problem (the old set of 1,000
    prompts held 722 distinct addition problems, 463 sorting, 559 countdown); the set "one difficulty up" holds
    only problems the training difficulty cannot draw (37 % / 70 % of the old one could)."""
    task, size = get_task(name), get_size("tiny")
    sets = eval_sets(task, size)
    for part in ("eval", "ood"):
        assert len({task.key(e) for e in sets[part]}) == len(sets[part]) > 300
    assert len(sets["eval"]) == (EVAL_PROMPTS if name.startswith("addition") else len(sets["eval"]))
    assert len(sets["eval"]) <= EVAL_PROMPTS
    assert not any(task.fits(e, size.difficulty) for e in sets["ood"])
    assert all(task.fits(e, size.difficulty) for e in sets["eval"])
    assert all(task.fits(e, size.difficulty) for e in task.examples(500, seed=3, difficulty=size.difficulty))


def test_addition_work_answers_tersely_or_with_working() -> None:
    """The task where length is a choice: the working is 8-20 characters, the terse answer 1-3; both count."""
    task = get_task("addition-work")
    assert working(57, 68) == "7+8=15;5+6+1=12;>125" and working(5, 7) == "5+7=12;>12"
    assert working(3, 40) == "3+0=3;0+4=4;>43"
    ex = {"prompt": "57+68=", "answer": "125"}
    assert task.check(ex, "7+8=15;5+6+1=12;>125") and task.check(ex, "125")
    assert not task.check(ex, "7+8=15;5+6+1=12;>124") and not task.check(ex, "7+8=15;>125;") and not task.check(ex, "")
    targets = [e["sft_answer"] for e in task.examples(400, seed=2)]
    verbose = [t for t in targets if ">" in t]
    assert 0.4 < len(verbose) / len(targets) < 0.6
    assert max(map(len, verbose)) <= task.max_answer_chars < task.max_completion_tokens
    # DAPO's buffer (the last 8 of 24 tokens) reaches the longest working, never a terse answer
    assert any(len(t) + 1 > task.max_completion_tokens - task.buffer for t in verbose)
    assert all(len(t) + 1 <= task.max_completion_tokens - task.buffer for t in targets if ">" not in t)


def test_canonical_keys_merge_reorderings() -> None:
    add, srt = get_task("addition"), get_task("sorting")
    assert add.key({"prompt": "12+30="}) == add.key({"prompt": "30+12="})
    assert srt.key({"prompt": "s312="}) == srt.key({"prompt": "s123="})
    assert add.part({"prompt": "12+30="}) == add.part({"prompt": "30+12="})


def _rewards(task_name: str = "addition"):  # type: ignore[no-untyped-def]
    task = get_task(task_name)
    tok = build_tokenizer(task)

    def decode(ids: list[int]) -> str:
        return str(tok.decode(ids))

    specials = special_ids(tok)
    return (
        task,
        tok,
        correctness_reward(task, tok.eos_token_id, specials, decode),
        format_reward(task, tok.eos_token_id, specials, decode),
    )


def test_rewards_follow_trl_signature() -> None:
    task, tok, correct_fn, format_fn = _rewards()
    eos = tok.eos_token_id
    prompts = ["12+30=", "12+30=", "1+1="]
    completions = ["42", "43", "2x"]
    ids = [tok(c, add_special_tokens=False)["input_ids"] + [eos] for c in completions]
    logged: dict[str, float] = {}
    correct = correct_fn(prompts, completions, ids, answer=["42", "42", "2"], log_metric=logged.__setitem__)
    assert correct == [1.0, 0.0, 0.0]
    assert logged["completions/correct_length"] == 3 and logged["completions/incorrect_length"] == 3
    fmt = format_fn(prompts, completions, ids)
    assert fmt == [0.1, 0.1, 0.0]


def test_padding_and_missing_eos_hacks_earn_nothing() -> None:
    """TRL decodes with skip_special_tokens=True, so `<pad><pad>14<eos>` reads "14": the rewards score
    the token ids instead. No EOS, a pad/unk/early EOS inside: no correctness, no format reward."""
    task, tok, correct_fn, format_fn = _rewards()
    eos, pad, unk = tok.eos_token_id, tok.pad_token_id, tok.unk_token_id
    digits = tok("14", add_special_tokens=False)["input_ids"]
    cases = {
        "honest": digits + [eos],
        "padded": [pad, pad] + digits + [eos],
        "pad inside": digits[:1] + [pad] + digits[1:] + [eos],
        "unk inside": digits + [unk, eos],
        "no eos": digits,
        "early eos": [eos] + digits + [eos],
    }
    texts = [tok.decode(ids, skip_special_tokens=True) for ids in cases.values()]  # what TRL hands over
    assert all(t in ("14", "") for t in texts) and texts[1] == "14"
    n = len(cases)
    correct = correct_fn(["7+7="] * n, texts, list(cases.values()), answer=["14"] * n)
    fmt = format_fn(["7+7="] * n, texts, list(cases.values()))
    assert correct == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    assert fmt == [0.1, 0.0, 0.0, 0.0, 0.0, 0.0]
    # ids generated past the first EOS (padding after the end) do not matter
    assert correct_fn(["7+7="], ["14"], [digits + [eos, pad, pad]], answer=["14"]) == [1.0]


def test_held_out_accuracy_scores_token_ids() -> None:
    """A model that always emits `<pad>` then the right answer scores 0 (the decoded text would be right)."""
    task = get_task("addition")
    tok = build_tokenizer(task)
    examples = [{"prompt": "1+2=", "answer": "3"}]
    target = [tok.pad_token_id] + tok("3", add_special_tokens=False)["input_ids"] + [tok.eos_token_id]

    class Scripted(torch.nn.Module):
        training = False

        def generate(self, input_ids, attention_mask, **_):  # type: ignore[no-untyped-def]
            return torch.cat([input_ids, torch.tensor([target] * input_ids.shape[0])], dim=1)

        def train(self, mode: bool = True):  # type: ignore[no-untyped-def]
            return self

    assert accuracy(Scripted(), tok, task, examples, "cpu", greedy=True) == 0.0
    target = target[1:]
    assert accuracy(Scripted(), tok, task, examples, "cpu", greedy=True) == 1.0


def test_char_tokenizer_round_trip_and_model_shapes() -> None:
    task = get_task("countdown")
    tok = build_tokenizer(task)
    text = "12 3 4>40=12*3+4"
    ids = tok(text, add_special_tokens=False)["input_ids"]
    assert len(ids) == len(text) and tok.decode(ids) == text
    assert tok.unk_token_id not in ids
    model = build_model(get_size("tiny"), tok)
    out = model(input_ids=torch.tensor([ids]))
    assert out.logits.shape == (1, len(ids), len(tok))
    assert sum(p.numel() for p in model.parameters()) < 500_000


def test_plots_are_pngs_with_a_paired_difference(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(0)
    runs = {
        arm: {
            s: ArmRun(
                records=[
                    {"step": i, "correct": rng.random(), "entropy": 0.5, "clip_ratio": 0.01}
                    | ({"heldout": 0.5 + 0.01 * i + (0.1 if arm == "method" else 0.0) + 0.01 * s} if i % 5 == 0 else {})
                    for i in range(1, 21)
                ],
            )
            for s in (0, 1, 2)
        }
        for arm in ("method", "baseline")
    }
    for s in (0, 1, 2):  # the end-of-training scores on the full held-out set differ from the curve subset's
        runs["method"][s] = replace(runs["method"][s], final={"heldout_greedy": 0.70 + 0.01 * s, "heldout_pass1": 0.6})
        runs["baseline"][s] = replace(
            runs["baseline"][s], final={"heldout_greedy": 0.66 + 0.005 * s, "heldout_pass1": 0.6}
        )
    diff = paired_difference(runs)
    assert diff["step"] == [5, 10, 15, 20] and all(abs(m - 0.1) < 1e-9 for m in diff["mean"])
    end = end_difference(runs)  # what difference.png marks as tested: the verdict's own effect
    from radar.repro.methods import BUILTIN
    from radar.repro.verdict import verdict

    tested = verdict(BUILTIN.get("dapo"), BUILTIN.get("grpo"), runs).metrics["heldout_greedy"]
    assert end.mean == pytest.approx(tested.effect, abs=1e-4) and end.mean != pytest.approx(0.1)
    assert (end.lo, end.hi) == pytest.approx(tuple(tested.interval), abs=1e-4)
    assert all(lo <= m <= hi for lo, m, hi in zip(diff["lo"], diff["mean"], diff["hi"], strict=True))
    paths = plot_run(runs, {"method": "dapo", "baseline": "grpo"}, tmp_path, "t")
    assert [p.name for p in paths] == ["difference.png", "curves.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths)
