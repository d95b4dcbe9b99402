"""Real-checkpoint reproductions on CPU: a tiny randomly initialised Qwen2 saved with a BPE tokenizer
trained here (the `tokenizers` library) and a chat template, a tiny JSONL math set, then
`radar repro run --model <folder> --dataset <jsonl>` end to end (verdict + efficiency profile);
final-answer extraction and equivalence on a table of hard cases; a missing model or a bad data set
gives one line; the held-out split is disjoint; the LoRA path trains an adapter."""

from __future__ import annotations

import json
import random
import runpy
import sys
import time
from pathlib import Path

import pytest

from radar.repro import checkpoint
from radar.repro.errors import ReproError
from radar.repro.mathreward import equivalent, final_answer, reference_answer
from radar.repro.runs_table import Runs
from radar.store import Workspace
from tests.cli_helpers import run_cli

CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def build_checkpoint(folder: Path, hidden: int = 32, layers: int = 2, seed: int = 0) -> Path:
    """A randomly initialised Qwen2 and a byte-level BPE tokenizer trained on arithmetic text."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    core = Tokenizer(models.BPE(unk_token=None))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    rng = random.Random(seed)
    corpus = [
        f"What is {rng.randint(0, 99)} plus {rng.randint(0, 99)}? The answer is \\boxed{{{rng.randint(0, 200)}}} #### 5"
        for _ in range(300)
    ]
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    core.train_from_iterator(corpus, trainer=trainer)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=core, eos_token="<|im_end|>", pad_token="<|endoftext|>", padding_side="left"
    )
    tok.chat_template = CHAT_TEMPLATE
    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tok),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        tie_word_embeddings=True,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
        bos_token_id=None,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def write_dataset(path: Path, n: int, seed: int = 1) -> Path:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        a, b = rng.randint(0, 99), rng.randint(0, 99)
        rows.append({"prompt": f"Problem {i}: what is {a} plus {b}?", "answer": f"{a} + {b} = {a + b}\n#### {a + b}"})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hf")
    return {"model": build_checkpoint(root / "model"), "data": write_dataset(root / "math.jsonl", 24), "root": root}


# -- answer extraction and equivalence ----------------------------------------------------------------
HARD_CASES = [
    # (completion, reference field, equal?)
    ("so the total is \\boxed{\\frac{1}{2}}.", "0.5", True),
    ("nested: \\boxed{\\frac{\\sqrt{3}}{2}}", "\\frac{\\sqrt3}{2}", True),
    ("\\boxed{2^{10}}", "1024", True),
    ("\\boxed{x^2+2x+1}", "(x+1)^2", True),
    ("\\boxed{2x+2}", "2(x+1)", True),
    ("\\boxed{(1,2)}", "(1, 2)", True),
    ("\\boxed{[1,2)}", "[1, 2]", False),
    ("\\boxed{\\dfrac{2}{4}}", "\\frac{1}{2}", True),
    ("\\boxed{\\sqrt{8}}", "2\\sqrt{2}", True),
    ("first \\boxed{3} then \\boxed{4}", "4", True),  # the last box counts
    ("#### 1,234", "1234", True),
    ("She pays $18.00 in all.\n#### 18", "Janet pays 16 - 3 = 13\n#### 18", True),
    ("The answer is 7.", "7.0", True),
    ("I got 1,000,000 in total", "1000000", True),
    ("so 3/4 of them", "\\frac34", True),
    ("x = 5", "5", True),
    ("\\boxed{5 \\text{ cm}}", "5", True),
    ("\\boxed{90^\\circ}", "90", True),
    ("\\boxed{-3}", "- 3", True),
    ("\\boxed{3}", "-3", False),
    ("\\boxed{0.333}", "\\frac{1}{3}", False),
    ("42", "43", False),
    ("no number here", "3", False),
    ("", "3", False),
    ("\\boxed{E}", "2.718", False),  # sympy's E is never substituted
    ("\\boxed{__import__('os').system('true')}", "0", False),  # never evaluated
    ("\\boxed{9^9^9}", "1", False),  # refused, not computed
    ("\\boxed{2^{100}}", "1", False),
    ("the answer is 18 or twenty", "18", False),  # a hedge is no final answer (credited before)
    ("\\boxed{18 or maybe twenty}", "18", False),
    ("the answer is 18 to 20", "18", False),
    ("the answer is 18 apples", "18", True),  # a unit word after the number still counts
]


@pytest.mark.parametrize(("completion", "reference", "equal"), HARD_CASES)
def test_final_answer_equivalence(completion: str, reference: str, equal: bool) -> None:
    assert equivalent(final_answer(completion), reference_answer(reference)) is equal


ADVERSARIAL = [
    "\\boxed{9**9**9}",  # Python's power, past the '^' checks
    "\\boxed{99^(99)^9}",  # a tower with a parenthesised exponent
    "\\boxed{(a+b+c+d+e)^99}",  # simplify against ^98 ran for minutes
    "\\boxed{pi.n(999999999)}",  # attribute access: a billion digits of pi
    "\\boxed{" * 20000,  # unclosed boxes
    "answer is " * 2000 + "$ y",  # the old 'answer is' pattern backtracked for 11 s
    "1" * 20000,  # over int()'s digit limit: was a ValueError out of the reward
]


@pytest.mark.parametrize("completion", ADVERSARIAL, ids=range(len(ADVERSARIAL)))
def test_untrusted_answers_are_refused_quickly(completion: str) -> None:
    assert equivalent("x+1", "1+x")  # sympy imported before the clock starts
    started = time.perf_counter()
    assert equivalent(final_answer(completion), reference_answer("(a+b+c+d+e)^98")) is False
    assert time.perf_counter() - started < 5  # a hang guard: each took 11 s to minutes (or raised) before; ~0.01 s now


def test_reference_answers() -> None:
    assert reference_answer("a + b = 13\n#### 13") == "13"
    assert reference_answer("so \\boxed{\\frac{1}{2}} is it") == "\\frac{1}{2}"
    assert reference_answer("\\frac{1}{2}") == "\\frac{1}{2}"  # a bare answer is taken whole
    assert reference_answer(42) == "42"  # type: ignore[arg-type]


def test_rewards_score_token_ids(tiny: dict[str, Path]) -> None:
    """Correct only with an EOS at the end and no other special token; format for a stated answer."""
    from transformers import AutoTokenizer

    from radar.repro.mathpolicy import eos_ids, reward_functions

    tok = AutoTokenizer.from_pretrained(tiny["model"])
    eos = eos_ids(tok)
    correct, fmt = reward_functions(tok, eos)

    def ids(text: str, end: bool = True) -> list[int]:
        return tok(text, add_special_tokens=False)["input_ids"] + ([tok.eos_token_id] if end else [])

    comps = [
        ids("The answer is \\boxed{13}"),
        ids("The answer is \\boxed{13}", end=False),  # truncated: no credit
        [tok.pad_token_id, *ids("\\boxed{13}")],  # a special token inside: no credit
        ids("\\boxed{12}"),
        ids("13"),  # right, but states no final-answer marker: no format reward
    ]
    got = correct(prompts=[""] * 5, completions=[""] * 5, completion_ids=comps, answer=["13"] * 5)
    assert got == [1.0, 0.0, 0.0, 0.0, 1.0]
    assert fmt(prompts=[""] * 5, completions=[""] * 5, completion_ids=comps) == [0.1, 0.0, 0.0, 0.1, 0.0]


# -- inputs: model and data set -------------------------------------------------------------------------
def test_missing_model_is_one_line(capsys: pytest.CaptureFixture[str], tiny: dict[str, Path], tmp_path: Path) -> None:
    ws, _ = Workspace.init(tmp_path / "ws")
    for model, words in (
        (str(tmp_path / "nope"), "no such folder"),
        ("nobody-here/no-such-model-xyz", "not in the local Hugging Face cache"),
        (str(tiny["data"]), "is a file"),
    ):
        result = run_cli(
            capsys, "--workspace", str(ws.root), "repro", "run", "--method", "dapo",
            "--model", model, "--dataset", str(tiny["data"]),
        )  # fmt: skip
        assert result.code == 1 and words in result.err and len(result.err.strip().splitlines()) == 1
    with ws.store() as store:
        assert Runs(store).list_runs() == []  # nothing stored


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ('{"prompt": "1+1?", "answer": "2"}\n{"prompt": "2+2?" "answer": "4"}\n', "line 2: not valid JSON"),
        ('{"prompt": "1+1?", "answer": "2"}\n\n[1, 2]\n', "line 3: expected an object"),
        ('{"prompt": "1+1?", "answer": "2"}\n' + "[" * 100_000 + "\n", "line 2: not valid JSON (RecursionError"),
        ('{"prompt": "", "answer": "2"}\n', 'line 1: needs a non-empty "prompt"'),
        ('{"prompt": "1+1?"}\n', 'line 1: needs a non-empty "answer"'),
        ('{"prompt": "1+1?", "answer": "2"}\n', "use at least 20 distinct prompts"),
        ("", "no rows"),
    ],
)
def test_bad_dataset_is_one_line_with_its_line_number(
    capsys: pytest.CaptureFixture[str], tiny: dict[str, Path], tmp_path: Path, content: str, words: str
) -> None:
    ws, _ = Workspace.init(tmp_path / "ws")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content, encoding="utf-8")
    result = run_cli(
        capsys, "--workspace", str(ws.root), "repro", "run", "--method", "dapo",
        "--model", str(tiny["model"]), "--dataset", str(bad),
    )  # fmt: skip
    assert result.code == 1 and words in result.err and len(result.err.strip().splitlines()) == 1
    with ws.store() as store:
        assert Runs(store).list_runs() == []


def test_model_needs_dataset_and_dataset_needs_model(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ws, _ = Workspace.init(tmp_path / "ws")
    base = ("--workspace", str(ws.root), "repro", "run", "--method", "dapo")
    assert "needs --dataset" in run_cli(capsys, *base, "--model", "x").err
    assert "need --model" in run_cli(capsys, *base, "--dataset", "x.jsonl").err


def test_heldout_split_is_disjoint_and_stable(tmp_path: Path) -> None:
    rows = [{"prompt": f"What is {i} times 7?", "answer": str(7 * i)} for i in range(400)]
    rows += [{"prompt": "  WHAT is 3   times 7? ", "answer": "21"}]  # a re-spaced, re-cased copy of row 3
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    data = checkpoint.load_dataset(path)
    rl = {checkpoint.prompt_key(r["prompt"]) for r in data.rl}
    ev = {checkpoint.prompt_key(r["prompt"]) for r in data.eval}
    assert rl and ev and not rl & ev
    assert 0.15 < len(data.eval) / len(data.rows) < 0.35  # about 25 % held out
    streams = [checkpoint.rl_stream(data, 500, seed) for seed in (0, 1, 1000)]
    overlap = checkpoint.eval_overlap(data, streams, 10_000)
    assert overlap.share == 0.0 and overlap.eval.prompts == len(ev)
    # the measurement can fail: a stream that leaks a held-out prompt is counted
    leak = [[*streams[0], data.eval[0]]]
    assert checkpoint.eval_overlap(data, leak, 10_000).eval.in_rl == 1
    # stable: the part of a prompt depends only on the prompt
    assert checkpoint.load_dataset(path).eval == data.eval


def test_resolve_model_from_the_hf_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tiny: dict[str, Path]
) -> None:
    """A name already in the local HF cache resolves to its snapshot folder, offline."""
    import shutil

    hub = tmp_path / "hub"
    snap = hub / "models--lab--tiny-qwen" / "snapshots" / ("0" * 40)
    shutil.copytree(tiny["model"], snap)
    (hub / "models--lab--tiny-qwen" / "refs").mkdir(parents=True)
    (hub / "models--lab--tiny-qwen" / "refs" / "main").write_text("0" * 40)
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    import huggingface_hub.constants as c

    monkeypatch.setattr(c, "HF_HUB_CACHE", str(hub))
    assert checkpoint.resolve_model("lab/tiny-qwen") == snap
    with pytest.raises(ReproError, match="not in the local Hugging Face cache"):
        checkpoint.resolve_model("lab/other")


# -- end to end ---------------------------------------------------------------------------------------
def test_run_on_a_saved_checkpoint_end_to_end(capsys: pytest.CaptureFixture[str], tiny: dict[str, Path]) -> None:
    ws, _ = Workspace.init(tiny["root"] / "ws")
    result = run_cli(
        capsys, "--workspace", str(ws.root), "repro", "run", "--model", str(tiny["model"]),
        "--dataset", str(tiny["data"]), "--method", "dapo", "--baseline", "grpo", "--seeds", "2", "--steps", "2",
        "--preset", "ckpt-quick", "--json",
    )  # fmt: skip
    assert result.code == 0, result.err
    doc = result.json()
    assert doc["status"] == "done", doc["error"]
    verdict = doc["verdict"]
    assert verdict["overall"] in ("better", "worse", "mixed", "no clear difference")
    assert verdict["metrics"]["heldout_greedy"]["n"] == 2
    assert doc["eval_overlap"]["share"] == 0.0 and doc["eval_overlap"]["eval"]["prompts"] > 0
    for arm in ("method", "baseline"):
        prof = doc["profile"][arm]
        for key in ("step_s", "generate_s", "train_s", "tokens_per_s", "peak_mem_gb"):
            assert prof[key] > 0, (arm, key, prof)
        assert prof["device"] == "cpu" and prof["generate_s"] + prof["reward_s"] <= prof["step_s"]
        assert set(prof["per_seed"]) == {"0", "1"}
    eff = doc["efficiency"]
    assert eff["pairs"] == 2 and eff["step_ratio"] > 0 and len(eff["step_ratio_interval"]) == 2
    assert (
        verdict["summary"].startswith("Pipeline check (a tiny checkpoint")
        and "Efficiency (cpu): " in verdict["summary"]
    )
    assert "per step" in verdict["summary"].split("Efficiency")[1]  # the machine's noise comes last, not first
    assert verdict["evidence"]["class"] == "pipeline check" and set(verdict["mechanisms"]) == {"method", "baseline"}
    assert verdict["mechanisms"]["method"]["zero_var_share"] is not None  # dapo's dynamic sampling measured it
    run_dir = Path(doc["folder"])
    record = json.loads((run_dir / "run.json").read_text())
    assert record["model"]["path"] == str(tiny["model"].resolve()) and record["model"]["chat_template"]
    assert record["configs"]["method"]["epsilon_high"] == 0.28 and record["dataset"]["eval"] > 0
    assert record["torch_threads"] == 1  # a tiny checkpoint on CPU trains on one thread
    shown = run_cli(capsys, "--workspace", str(ws.root), "repro", "show", doc["id"])
    assert "efficiency profile" in shown.out and "per step" in shown.out
    with ws.store() as store:  # what the dashboard's repro page reads
        typed = Runs(store).get_run(doc["id"])
    assert typed is not None and typed.profiles["method"].step_s == doc["profile"]["method"]["step_s"]
    assert typed.efficiency_text == eff["text"]

    # The TRL export of a checkpoint run launches: its script trains the method arm on the same data and rewards.
    exported = run_cli(
        capsys, "--workspace", str(ws.root), "repro", "export", doc["id"], "--engine", "trl", "--gpus", "1", "--json"
    ).json()
    script = next(Path(p) for p in exported["files"] if p.endswith("train_grpo.py"))
    argv = sys.argv
    try:
        sys.argv = [str(script), "--arm", "method", "--pair", "0"]
        runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.argv = argv
    assert (script.parent / "out-method-pair0").is_dir()


def test_lora_trains_an_adapter(tiny: dict[str, Path], tmp_path: Path) -> None:
    """The LoRA path: peft wraps the policy, only adapter weights train, the profile is recorded."""
    pytest.importorskip("peft")
    from radar.repro.methods import BUILTIN

    get_method = BUILTIN.get
    from radar.repro.sizes import get_checkpoint_preset
    from radar.repro.trainer import train_checkpoint_arm

    data = checkpoint.load_dataset(tiny["data"])
    records: list[dict] = []  # type: ignore[type-arg]
    out = train_checkpoint_arm(
        model_path=tiny["model"],
        method=get_method("grpo-kl"),  # beta > 0: the reference is the base model with the adapter disabled
        preset=get_checkpoint_preset("ckpt-quick"),
        data=data,
        steps=1,
        seed=0,
        device="cpu",
        lora=True,
        output_dir=tmp_path / "trl",
        on_record=records.append,
        should_cancel=lambda: False,
        eval_rows=checkpoint.eval_rows(data, 4),
    )
    prof = out.profile
    assert out.steps == 1 and prof["lora"] is True
    assert prof["ref_model"] == "adapter disabled (PEFT)" and prof["ref_s"] > 0
    assert records and "loss" in records[0]


def test_efficiency_is_paired_over_seeds_and_quoted_in_the_summary() -> None:
    """The per-step ratio comes with its spread over seed pairs; memory as a difference; the sentence
    quotes the structured numbers at its end (it opened with them, so CPU-load noise led the summary)."""
    from radar.repro.methods import BUILTIN

    get_method = BUILTIN.get
    import msgspec

    from radar.repro.result_shapes import Efficiency
    from radar.repro.shapes import ArmRun
    from radar.repro.verdict import efficiency, verdict

    def prof(step: float, mem: float) -> dict[str, object]:
        return {"step_s": step, "tokens_per_s": 100 / step, "peak_mem_gb": mem, "device": "cuda",
                "peak_mem_kind": "cuda max allocated", "generate_s": step / 2, "train_s": step / 2}  # fmt: skip

    profiles = {
        "method": {0: prof(1.10, 2.4), 1: prof(1.05, 2.4), 2: prof(1.08, 2.5)},
        "baseline": {0: prof(1.00, 2.0), 1: prof(1.00, 2.0), 2: prof(1.00, 2.1)},
    }
    e = efficiency(profiles)
    assert e.pairs == 3 and isinstance(e.step_ratio, float) and 1.07 < e.step_ratio < 1.08
    assert isinstance(e.step_ratio_interval, list) and isinstance(e.peak_mem_diff_gb, float)
    lo, hi = e.step_ratio_interval
    assert lo is not None and hi is not None and lo < e.step_ratio < hi and e.step_ratio_range == [1.05, 1.1]
    assert abs(e.peak_mem_diff_gb - 0.4) < 1e-9
    assert isinstance(e.text, str) and e.text.startswith("8% slower per step (x1.08; pairs x1.05-x1.10, 95% CI x1.0")
    assert e.text.endswith(" over 3 seed pairs), +0.40 GB peak (cuda max allocated)")
    faster = efficiency({"method": {0: prof(0.5, 1.0)}, "baseline": {0: prof(1.0, 1.0)}})
    assert faster.text == (
        "50% faster per step (x0.50 from one seed pair: no spread), the same peak within 0.01 GB (cuda max allocated)"
    )
    runs = {
        arm: {s: ArmRun(final={"heldout_greedy": 0.5 + d, "heldout_pass1": 0.4 + d}) for s, d in
              enumerate((0.02, 0.03, 0.025) if arm == "method" else (0.0, 0.0, 0.0))}
        for arm in ("method", "baseline")
    }  # fmt: skip
    doc = verdict(get_method("dapo"), get_method("grpo"), runs, profiles=profiles)
    # the verdict first; the efficiency phrase (a shared CPU's load shows in it) closes the summary
    assert doc.summary.endswith(f"Efficiency (cuda): {e.text}.") and "8% slower" not in doc.summary[:200]
    assert doc.efficiency == e
    assert json.loads(msgspec.json.encode(efficiency({}))) == {"pairs": 0}  # no pair: only the count is written
    assert list(msgspec.to_builtins(e)) == [*Efficiency.__struct_fields__]  # a full one: every key, in order
    without = verdict(get_method("dapo"), get_method("grpo"), runs)  # no profiles: no efficiency, none written
    assert without.efficiency is msgspec.UNSET and "efficiency" not in msgspec.to_builtins(without)


def test_profiler_leaves_out_the_warmup_cycle() -> None:
    """One generation cycle (mu steps) of one-off costs is left out once an arm ran two cycles."""
    import time

    from radar.repro.profile import StepProfiler

    def run(steps: int) -> dict[str, object]:
        p = StepProfiler("cpu", warmup_steps=2)
        for i in range(steps):
            p.on_step_begin(None, None, None)
            if i % 2 == 0:  # a generation every mu = 2 steps; the first one is slow
                with p.section("generate"):
                    time.sleep(0.3 if i == 0 else 0.02)
                p.generated_tokens += 10
            p.on_step_end(None, None, None)
        return p.summary()

    s = run(4)
    assert s["warmup_excluded"] == 2 and s["steps"] == 4 and s["measured_steps"] == 2
    assert s["generated_tokens"] == 20  # a total over all steps, like "steps"; the rates are over the measured ones
    assert s["tokens_per_s"] is not None and s["tokens_per_s"] <= 10 / 0.02
    assert s["first_step_s"] >= 0.3 > s["step_s"] >= 0.01 and s["generate_s"] >= 0.01
    assert s["peak_mem_gb"] > 0.01 and s["peak_mem_kind"].startswith("peak RSS")
    short = run(2)  # too short to leave anything out
    assert short["warmup_excluded"] == 0 and short["generated_tokens"] == 10 and short["step_s"] >= 0.15


def test_toy_tasks_get_the_same_profile(tmp_path: Path) -> None:
    """The toy path records the same profile (an untrained char-level policy, 2 steps: no SFT needed)."""
    import torch

    from radar.repro.methods import BUILTIN

    get_method = BUILTIN.get
    from radar.repro.policy import build_model, build_tokenizer, eval_sets
    from radar.repro.sizes import get_size
    from radar.repro.tasks import get_task
    from radar.repro.toy_arm import ToyArm
    from radar.repro.trainer import train_arm

    task, size = get_task("addition"), get_size("tiny")
    tok = build_tokenizer(task)
    build_model(size, tok).save_pretrained(tmp_path / "policy")
    tok.save_pretrained(tmp_path / "policy")
    sets = {k: v[:8] for k, v in eval_sets(task, size).items()}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the runner does for the tiny preset
    try:
        out = train_arm(
            ToyArm(
                policy_path=tmp_path / "policy",
                method=get_method("grpo-kl"),  # beta > 0: the reference model's cost is profiled
                task=task,
                size=size,
                steps=2,
                seed=0,
                device="cpu",
                output_dir=tmp_path / "trl",
                on_record=lambda _: None,
                should_cancel=lambda: False,
            ),
            eval_sets=sets,
            pass_samples=1,
        )
    finally:
        torch.set_num_threads(threads)
    prof = out.profile
    assert prof["steps"] == 2 and prof["device"] == "cpu" and prof["ref_model"] == "separate copy"
    for key in ("step_s", "generate_s", "train_s", "ref_s", "tokens_per_s", "peak_mem_gb", "ref_mem_gb"):
        assert prof[key] > 0, (key, prof)
    assert prof["generate_s"] + prof["reward_s"] + prof["ref_s"] <= prof["step_s"]


def test_a_cancelled_toy_arm_stops_at_its_next_trl_step(tmp_path: Path) -> None:
    """The toy engine the worker resolves (repro/toy_engine.py, TRL) stops at the step its cancel check says so
    and raises RunCancelled: the in-process half of the cancel and kill tests in test_repro_cli.py, whose
    worker and arm processes train with tests/fast_toy_engine.py."""
    import torch

    from radar.repro import toy_engine
    from radar.repro.errors import RunCancelled
    from radar.repro.execute import toy_engine as resolve_engine
    from radar.repro.methods import BUILTIN
    from radar.repro.policy import build_model, build_tokenizer
    from radar.repro.sizes import get_size
    from radar.repro.tasks import get_task

    assert resolve_engine() is toy_engine  # the default: no RADAR_REPRO_TOY_ENGINE in the suite's environment
    task, size = get_task("sorting"), get_size("tiny")
    tok = build_tokenizer(task)
    build_model(size, tok).save_pretrained(tmp_path / "policy")
    tok.save_pretrained(tmp_path / "policy")
    records: list[dict[str, float]] = []
    threads = torch.get_num_threads()
    try:
        with pytest.raises(RunCancelled):
            toy_engine.train_toy_arm(
                toy_engine.ToyArm(
                    policy_path=tmp_path / "policy",
                    method=BUILTIN.get("dr_grpo"),
                    task=task,
                    size=size,
                    steps=5000,
                    seed=0,
                    device="cpu",
                    output_dir=tmp_path / "trl",
                    on_record=records.append,
                    should_cancel=lambda: len(records) >= 2,
                )
            )
    finally:
        torch.set_num_threads(threads)
    steps = [r["step"] for r in records]  # the check after step 3 stops it; step 3, already trained, is logged
    assert steps == list(range(1, len(steps) + 1)) and 2 <= len(steps) <= 3, steps


def test_scoring_without_an_end_of_sequence_token_is_one_clear_error(tiny: dict[str, Path]) -> None:
    """No EOS anywhere (tokenizer, generation config): no completion could count, so scoring says how to fix it."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from radar.repro.mathpolicy import math_accuracy

    tok = AutoTokenizer.from_pretrained(tiny["model"])
    model = AutoModelForCausalLM.from_pretrained(tiny["model"])
    tok.eos_token, tok.pad_token = None, None
    model.generation_config.eos_token_id = None
    rows = [{"prompt": "1+1?", "answer": "2"}]
    with pytest.raises(ReproError, match="no end-of-sequence token"):
        math_accuracy(model, tok, rows, max_new_tokens=4, batch=1)
