"""The policy: a character-level tokenizer and a small causal LM (transformers' Qwen2) built from a
config, warm-started by supervised fine-tuning to a *partial* success rate, cached per task and size.

Why partial: GRPO learns only from groups whose rewards differ. A policy that is always right or
always wrong gives zero-std groups and no gradient, so SFT stops once sampled accuracy (temperature
1, as in RL) on problems of the RL part (never in the SFT data) reaches ``target_accuracy``. SFT
draws only from the ``sft`` part of the problem space (repro/tasks.py); each seed pair of a run has
its own warm start (SFT seed 1234 + pair), so a verdict is not about one initialisation.

Nothing here touches a model hub: the tokenizer is built from the task's alphabet, the model from a
config, and the cache is a local folder that ``GRPOTrainer`` loads by path (it needs a path to build
the reference model when beta > 0).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import shutil
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import torch  # noqa: E402
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers  # noqa: E402
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM  # noqa: E402

from radar.repro.shapes import Example, WarmStart  # noqa: E402
from radar.repro.sizes import SIZES, PolicySize, get_size  # noqa: E402,F401  (re-exported)
from radar.repro.tasks import Task, answer_of  # noqa: E402

SPECIAL = ("<pad>", "<eos>", "<unk>")
CACHE_VERSION = 3  # 3: held-out sets of distinct problems, out-of-distribution set beyond the training difficulty
EVAL_PROMPTS = 1000  # held-out problems scored at the end of each arm (greedy and pass@1); fewer where the
# eval part has fewer distinct problems (sorting about 750, countdown about 800)
OOD_PROMPTS = 500  # held-out problems one difficulty up that the training difficulty cannot draw
CURVE_PROMPTS = 200  # held-out problems scored during training (the held-out curve)


def build_tokenizer(task: Task) -> PreTrainedTokenizerFast:
    """One token per character of the task's alphabet, plus pad/eos/unk. Decoding concatenates."""
    vocab = {tok: i for i, tok in enumerate(SPECIAL)}
    for ch in sorted(set(task.alphabet)):
        vocab.setdefault(ch, len(vocab))
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    core.decoder = decoders.Fuse()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=core, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>", padding_side="left"
    )
    tok.model_max_length = task.max_prompt_chars + max(task.max_answer_chars, task.max_completion_tokens) + 4
    return tok


def build_model(size: PolicySize, tokenizer: PreTrainedTokenizerFast, seed: int = 0) -> Qwen2ForCausalLM:
    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=size.hidden,
        intermediate_size=size.intermediate,
        num_hidden_layers=size.layers,
        num_attention_heads=size.heads,
        num_key_value_heads=size.heads,
        max_position_embeddings=64,
        tie_word_embeddings=True,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=None,
        attention_dropout=0.0,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.generation_config.bos_token_id = None
    return model


def _encode_batch(tok: PreTrainedTokenizerFast, examples: list[Example], device: torch.device) -> tuple:
    """Right-padded prompt+answer+eos; labels only on the answer and eos."""
    seqs, labels = [], []
    for ex in examples:
        p = tok(ex["prompt"], add_special_tokens=False)["input_ids"]
        a = tok(ex.get("sft_answer", ex["answer"]), add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
        seqs.append(p + a)
        labels.append([-100] * len(p) + a)
    width = max(map(len, seqs))
    ids = torch.full((len(seqs), width), tok.pad_token_id)
    lab = torch.full((len(seqs), width), -100)
    att = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, (s, la) in enumerate(zip(seqs, labels, strict=True)):
        ids[i, : len(s)] = torch.tensor(s)
        lab[i, : len(la)] = torch.tensor(la)
        att[i, : len(s)] = 1
    return ids.to(device), att.to(device), lab.to(device)


def special_ids(tok: Any) -> frozenset[int]:
    return frozenset(int(i) for i in tok.all_special_ids)


@functools.lru_cache(maxsize=8)  # seconds to draw for sorting/countdown; every arm of a run scores the same sets
def eval_sets(task: Task, size: PolicySize) -> dict[str, list[Example]]:
    """The held-out problems of a task and size: in-distribution, one difficulty up (only problems the training
    difficulty cannot draw), and the curve subset. All distinct problems (by canonical key)."""
    held_out = task.eval_set(EVAL_PROMPTS, difficulty=size.difficulty)
    return {
        "eval": held_out,
        "ood": task.eval_set(OOD_PROMPTS, difficulty=size.difficulty + 1, seed=888_888, beyond=size.difficulty),
        "curve": held_out[:CURVE_PROMPTS],
    }


@torch.no_grad()
def accuracy(
    model: Any, tok: Any, task: Task, examples: list[Example], device: Any, greedy: bool = False, samples: int = 1
) -> float:
    """Share of examples answered correctly, greedily or sampled at temperature 1 (averaged over
    ``samples`` draws per example: pass@1). Scored on the token ids as the rewards are: an answer
    counts only when it ends with EOS and holds no special token."""
    was_training = model.training
    model.eval()
    eos, specials = tok.eos_token_id, special_ids(tok)
    right = total = 0
    for _ in range(1 if greedy else samples):
        for start in range(0, len(examples), 500):
            chunk = examples[start : start + 500]
            enc = tok([e["prompt"] for e in chunk], return_tensors="pt", padding=True, add_special_tokens=False)
            out = model.generate(
                input_ids=enc["input_ids"].to(device),
                attention_mask=enc["attention_mask"].to(device),
                max_new_tokens=task.max_completion_tokens,
                do_sample=not greedy,
                temperature=1.0,
                top_k=0,
                top_p=1.0,
                pad_token_id=tok.pad_token_id,
                eos_token_id=tok.eos_token_id,
            )
            for e, ids in zip(chunk, out[:, enc["input_ids"].shape[1] :].tolist(), strict=True):
                answer = answer_of(ids, eos, specials, tok.decode)
                right += answer is not None and task.check(e, answer)
                total += 1
    if was_training:
        model.train()
    return right / total if total else 0.0


def sampled_accuracy(
    model: Any, tok: Any, task: Task, examples: list[Example], device: Any, greedy: bool = False
) -> float:
    """Share answered correctly at temperature 1 (or greedily): ``accuracy`` with one sample."""
    return accuracy(model, tok, task, examples, device, greedy=greedy)


def warm_start(task: Task, size: PolicySize, device: torch.device, seed: int = 1234, log=print) -> tuple:
    """Train from scratch with next-token cross-entropy on answers until sampled accuracy >= target."""
    threads = torch.get_num_threads()
    if device.type == "cpu" and size.cpu_threads:
        torch.set_num_threads(size.cpu_threads)
    try:
        return _warm_start(task, size, device, seed, log)
    finally:
        torch.set_num_threads(threads)


def _warm_start(task: Task, size: PolicySize, device: torch.device, seed: int, log) -> tuple:  # noqa: ANN001
    tok = build_tokenizer(task)
    model = build_model(size, tok, seed)
    model.to(device)  # type: ignore[arg-type]  # transformers' typed .to wrapper
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=size.sft_lr, weight_decay=0.0)
    rng = random.Random(seed)
    # the stopping rule measures what RL will face: problems of the RL part, never seen in SFT
    monitor = task.examples(256, seed=seed + 1, difficulty=size.difficulty, part="rl")
    started, acc, step = time.perf_counter(), 0.0, 0
    seen: set[str] = set()  # canonical keys of every SFT problem (to measure overlap with held-out sets)
    for step in range(1, size.sft_max_steps + 1):
        batch = task.examples(size.sft_batch, seed=rng.randrange(2**31), difficulty=size.difficulty, part="sft")
        seen.update(task.key(ex) for ex in batch)
        ids, att, lab = _encode_batch(tok, batch, device)
        loss = model(input_ids=ids, attention_mask=att, labels=lab).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 50 == 0:
            acc = sampled_accuracy(model, tok, task, monitor, device)
            log(f"sft step {step}: loss {loss.item():.3f}, sampled accuracy {acc:.2f}")
            if acc >= size.target_accuracy:
                break
    info: WarmStart = {
        "task": task.name,
        "size": asdict(size),
        "sft_steps": step,
        "sampled_accuracy": acc,
        "parameters": sum(p.numel() for p in model.parameters()),
        "seconds": round(time.perf_counter() - started, 1),
        "cache_version": CACHE_VERSION,
        "seed": seed,
        "eval_overlap": {
            name: {"prompts": len(exs), "in_sft": sum(task.key(e) in seen for e in exs)}
            for name, exs in eval_sets(task, size).items()
            if name != "curve"
        },
    }
    return model, tok, info


def warm_start_key(task: Task, size: PolicySize, seed: int = 0) -> str:
    """Changes whenever anything that shapes the warm start changes (so a stale cache is never used)."""
    fields = (
        CACHE_VERSION,
        task.name,
        task.alphabet,
        size.hidden,
        size.layers,
        size.heads,
        size.intermediate,
        size.sft_lr,
        size.sft_batch,
        size.sft_max_steps,
        size.target_accuracy,
        size.difficulty,
        seed,
        task.max_completion_tokens,
    )
    return hashlib.blake2b(repr(fields).encode(), digest_size=4).hexdigest()


def cached_policy(
    cache_root: Path, task: Task, size: PolicySize, device: torch.device, log=print, pair: int = 0
) -> tuple[Path, WarmStart]:
    """Path of warm start number ``pair`` for (task, size) (SFT seed 1234 + pair), trained and saved
    on first use. Each seed pair of a run starts from its own warm start."""
    folder = cache_root / f"{task.name}-{size.name}-{warm_start_key(task, size, pair)}"
    info_path = folder / "warm_start.json"
    if info_path.exists():
        return folder, json.loads(info_path.read_text(encoding="utf-8"))
    model, tok, info = warm_start(task, size, device, seed=1234 + pair, log=log)
    tmp = cache_root / f".{folder.name}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    model.to("cpu").save_pretrained(tmp)
    tok.save_pretrained(tmp)
    (tmp / "warm_start.json").write_text(json.dumps(info, indent=2), encoding="utf-8")
    try:
        tmp.rename(folder)  # atomic: a concurrent worker either wins or finds the finished folder
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not info_path.exists():
            raise
    return folder, json.loads(info_path.read_text(encoding="utf-8"))
