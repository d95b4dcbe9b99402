"""Task generators, verifiers and reward functions; the char-level tokenizer."""

from __future__ import annotations

import random

import pytest
import torch

from radar.repro.plots import plot_run
from radar.repro.policy import build_model, build_tokenizer, get_size
from radar.repro.tasks import TASKS, correctness_reward, eval_expression, format_reward, get_task
from radar.repro.trainer import LossBatch, gmpo_loss


@pytest.mark.parametrize("name", sorted(TASKS))
def test_reference_answers_are_correct_and_vary_in_length(name: str) -> None:
    task = get_task(name)
    examples = task.examples(300, seed=1)
    assert all(task.check(ex, ex["answer"]) for ex in examples)
    assert len({len(ex["answer"]) for ex in examples}) >= 2
    assert all(
        len(ex["prompt"]) <= task.max_prompt_chars and len(ex["answer"]) <= task.max_answer_chars for ex in examples
    )
    assert all(set(ex["prompt"] + ex["answer"]) <= set(task.alphabet) for ex in examples)
    assert task.examples(5, seed=1) == task.examples(5, seed=1)


def test_countdown_accepts_any_valid_expression_and_rejects_reuse() -> None:
    task = get_task("countdown")
    ex = {"prompt": "2 3 4>10=", "numbers": [2, 3, 4], "target": 10, "answer": "2*3+4"}
    assert task.check(ex, "4+2*3")
    assert task.check(ex, "2+4*2") is False  # 2 used twice
    assert task.check(ex, "2*5") is False  # 5 not given
    assert task.check(ex, "2*3+") is False
    assert eval_expression("2+3*4-5") == 9


def test_rewards_follow_trl_signature() -> None:
    task = get_task("addition")
    tok = build_tokenizer(task)
    eos = tok.eos_token_id
    prompts = ["12+30=", "12+30=", "1+1="]
    completions = ["42", "43", "2x"]
    ids = [tok(c, add_special_tokens=False)["input_ids"] + [eos] for c in completions]
    logged: dict[str, float] = {}
    correct = correctness_reward(task)(
        prompts, completions, ids, answer=["42", "42", "2"], log_metric=logged.__setitem__
    )
    assert correct == [1.0, 0.0, 0.0]
    assert logged["completions/correct_length"] == 3 and logged["completions/incorrect_length"] == 3
    fmt = format_reward(task, eos)(prompts, completions, ids)
    assert fmt == [0.1, 0.1, 0.0]
    truncated = format_reward(task, eos)(prompts[:1], ["42"], [ids[0][:-1]])
    assert truncated == [0.0]


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


def test_gmpo_plugin_loss() -> None:
    from trl import GRPOConfig

    cfg = GRPOConfig(
        output_dir="/tmp/unused",
        epsilon=0.4,
        epsilon_high=0.4,
        num_generations=2,
        per_device_train_batch_size=2,
        use_cpu=True,
        report_to="none",
    )
    logps = torch.log(torch.tensor([[0.5, 0.5], [0.5, 0.5]]))
    adv = torch.tensor([[1.0], [-1.0]])
    mask = torch.ones(2, 2)
    batch = LossBatch(logps, logps.clone(), adv, mask, torch.zeros(2, 2), cfg)
    loss, metrics = gmpo_loss(batch)
    assert loss.item() == pytest.approx(0.0) and metrics["clip_ratio/region_mean"] == 0.0
    # ratios e^1 per token: A > 0 is clipped to e^0.4, A < 0 keeps e^1 (pessimistic)
    batch = LossBatch(logps + 1.0, logps, adv, mask, torch.zeros(2, 2), cfg)
    loss, metrics = gmpo_loss(batch)
    assert loss.item() == pytest.approx(-(torch.exp(torch.tensor(0.4)) - torch.exp(torch.tensor(1.0))).item() / 2)
    assert metrics["clip_ratio/region_mean"] == 0.5


def test_plots_are_pngs(tmp_path) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(0)
    runs = {
        arm: {s: [{"step": i, "correct": rng.random(), "entropy": 0.5} for i in range(1, 20)] for s in (0, 1)}
        for arm in ("method", "baseline")
    }
    paths = plot_run(runs, {"method": "dapo", "baseline": "grpo"}, tmp_path, "t")
    assert paths and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths)
