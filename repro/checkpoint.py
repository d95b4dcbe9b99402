"""Real checkpoints and math data sets for `radar repro run --model PATH_OR_NAME --dataset FILE.jsonl`.

- ``resolve_model``: a local Hugging Face model folder, or a name already in the local HF cache.
  Offline only (``local_files_only``): nothing is downloaded; a missing model is one line naming the fix.
- ``load_dataset``: JSONL, one ``{"prompt": ..., "answer": ...}`` object per line (``question`` is
  accepted for ``prompt``: GSM8K's field name). A bad line is one error naming its line number.
- Held out by construction: a hash of the normalised prompt puts each problem in exactly one part,
  ``eval`` (25 %) or ``rl`` (75 %), with the same hash as the toy tasks (repro/tasks.py ``part_of``);
  repeated prompts land in the same part. ``eval_overlap`` measures it anyway.

No torch here: the CLI validates a run before any worker starts.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from radar.repro.errors import ReproError
from radar.repro.mathreward import reference_answer
from radar.repro.shapes import Example, ModelFingerprint, Overlap, OverlapPart
from radar.repro.tasks import part_of

MAX_ROWS = 500_000
MAX_PROMPT_CHARS = 20_000
MAX_LINE_BYTES = 1_000_000  # a prompt, its answer and JSON escapes fit many times over
MIN_EVAL = 1
_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")


# -- the model ---------------------------------------------------------------------------------------
def resolve_model(name_or_path: str) -> Path:
    """The folder of a local checkpoint (config.json + a tokenizer), from a path or a cached hub name."""
    text = str(name_or_path).strip()
    if not text:
        raise ReproError("--model is empty; pass a local Hugging Face model folder or a cached model name")
    path = Path(text).expanduser()
    looks_like_path = text.startswith((".", "/", "~")) or text.count("/") > 1  # hub names are "org/name"
    if path.is_dir():
        return _check_folder(path.resolve())
    if path.exists():
        raise ReproError(f"--model {text}: is a file; pass the model's folder (with config.json)")
    if looks_like_path or not _REPO_ID.match(text):
        raise ReproError(f"--model {text}: no such folder; pass a local Hugging Face model folder (with config.json)")
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError

        folder = snapshot_download(repo_id=text, local_files_only=True)
    except (LocalEntryNotFoundError, FileNotFoundError, OSError, ValueError):
        home = os.environ.get("HF_HOME") or "~/.cache/huggingface"
        raise ReproError(
            f"--model {text}: not in the local Hugging Face cache ({home}) and nothing is downloaded; "
            f"download it where there is network (`huggingface-cli download {text}`) or pass a local folder"
        ) from None
    return _check_folder(Path(folder))


def _check_folder(folder: Path) -> Path:
    if not (folder / "config.json").is_file():
        raise ReproError(f"--model {folder}: no config.json there; pass a Hugging Face model folder")
    if not any((folder / f).is_file() for f in ("tokenizer.json", "tokenizer_config.json", "tokenizer.model")):
        raise ReproError(f"--model {folder}: no tokenizer files there (tokenizer.json / tokenizer_config.json)")
    return folder


def model_fingerprint(folder: Path) -> ModelFingerprint:
    """What identifies a checkpoint in a run record: its folder, config hash and weight file sizes."""
    config = (folder / "config.json").read_bytes()
    weights = sorted(p for p in folder.iterdir() if p.suffix in (".safetensors", ".bin"))
    try:
        cfg = json.loads(config)
    except json.JSONDecodeError:
        cfg = {}
    return {
        "path": str(folder),
        "config_sha256": hashlib.sha256(config).hexdigest()[:16],
        "model_type": cfg.get("model_type"),
        "weights": {p.name: p.stat().st_size for p in weights},
        "chat_template": _has_chat_template(folder),
    }


def _has_chat_template(folder: Path) -> bool:
    if (folder / "chat_template.jinja").is_file() or (folder / "chat_template.json").is_file():
        return True
    try:
        cfg = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    return bool(cfg.get("chat_template"))


# -- the data set ------------------------------------------------------------------------------------
def prompt_key(prompt: str) -> str:
    """The canonical problem: whitespace collapsed, case folded (a re-spaced copy is the same problem)."""
    return " ".join(str(prompt).split()).casefold()


def part(prompt: str) -> str:
    """'eval' (25 %) or 'rl' (75 %), fixed by a hash of the canonical prompt."""
    return "eval" if part_of("math:" + prompt_key(prompt)) == "eval" else "rl"


@dataclass(frozen=True)
class MathDataset:
    path: str
    sha256: str
    rows: tuple[Example, ...]  # prompt, answer (the reference final answer), line, part
    rl: tuple[Example, ...] = field(default=())
    eval: tuple[Example, ...] = field(default=())

    def summary(self) -> dict[str, str | int]:
        return {
            "path": self.path,
            "sha256": self.sha256,
            "rows": len(self.rows),
            "rl": len(self.rl),
            "eval": len(self.eval),
            "split": "25 % held out by a hash of the normalised prompt",
        }


def _lines(p: Path, digest: hashlib._Hash) -> Iterator[tuple[int, bytes]]:
    """(number, line) of a JSONL file, read a line at a time (``digest`` takes every byte read): a line longer
    than ``MAX_LINE_BYTES`` is refused once that much of it is read (a 1 GB line costs 1 MB), never after reading
    or parsing all of it."""
    number = 0
    with p.open("rb") as fh:
        while True:
            line = fh.readline(MAX_LINE_BYTES + 1)
            if not line:
                return
            digest.update(line)
            if len(line) > MAX_LINE_BYTES:
                raise ReproError(
                    f"--dataset {p}, line {number + 1}: longer than {MAX_LINE_BYTES:,} bytes; one {{prompt, answer}} "
                    f"object per line (prompts of at most {MAX_PROMPT_CHARS:,} characters)"
                )
            for part in line.splitlines() or [b""]:  # \r and \r\n end lines too, as they always did
                number += 1
                yield number, part


def load_dataset(path: str | Path, min_rl: int = 1) -> MathDataset:
    """Read and check a JSONL math set a line at a time; any bad line is one ReproError naming the line and the
    fix, said as soon as that line is read."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise ReproError(f"--dataset {path}: no such file; pass a JSONL file of {{prompt, answer}} objects")
    digest = hashlib.sha256()
    rows: list[Example] = []
    for number, line in _lines(p, digest):
        text = line.strip()
        if not text:
            continue
        where = f"--dataset {p}, line {number}"
        try:
            obj = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:  # RecursionError: [[[[...]]]]
            raise ReproError(
                f"{where}: not valid JSON ({exc.__class__.__name__}: {exc}); one object per line"
            ) from None
        if not isinstance(obj, dict):
            raise ReproError(f'{where}: expected an object like {{"prompt": "...", "answer": "..."}}')
        prompt = obj.get("prompt", obj.get("question"))
        answer = obj.get("answer", obj.get("solution"))
        if not isinstance(prompt, str) or not prompt.strip():
            raise ReproError(f'{where}: needs a non-empty "prompt" (or "question") string')
        if len(prompt) > MAX_PROMPT_CHARS:
            raise ReproError(f"{where}: prompt of {len(prompt)} characters (at most {MAX_PROMPT_CHARS})")
        if isinstance(answer, bool) or not isinstance(answer, str | int | float) or not str(answer).strip():
            raise ReproError(f'{where}: needs a non-empty "answer" (a string or a number)')
        ref = reference_answer(str(answer))
        if not ref:
            raise ReproError(f"{where}: no final answer in {str(answer)[:60]!r} (after #### or in \\boxed{{}})")
        rows.append({"prompt": prompt, "answer": ref, "line": number, "part": part(prompt)})
        if len(rows) > MAX_ROWS:
            raise ReproError(f"--dataset {p}: more than {MAX_ROWS} rows; pass a smaller file")
    if not rows:
        raise ReproError(f"--dataset {p}: no rows; pass a JSONL file of {{prompt, answer}} objects")
    rl = tuple(r for r in rows if r["part"] == "rl")
    ev = tuple(r for r in rows if r["part"] == "eval")
    if len(ev) < MIN_EVAL or len(rl) < min_rl:
        raise ReproError(
            f"--dataset {p}: {len(rows)} rows split into {len(rl)} for training and {len(ev)} held out "
            f"(25 % by a hash of the prompt); use at least 20 distinct prompts"
        )
    return MathDataset(str(p.resolve()), digest.hexdigest(), tuple(rows), rl, ev)


def rl_stream(data: MathDataset, n: int, seed: int) -> list[Example]:
    """The RL prompts of one arm's RL seed: the training part, shuffled per epoch, ``n`` in all."""
    rng = random.Random(10_000 + seed)
    out: list[Example] = []
    while len(out) < n:
        epoch = list(data.rl)
        rng.shuffle(epoch)
        out.extend(epoch)
    return out[:n]


def eval_rows(data: MathDataset, n: int) -> list[Example]:
    """Up to ``n`` distinct held-out problems, in a fixed order (hash of the prompt)."""
    seen: dict[str, Example] = {}
    for row in data.eval:
        seen.setdefault(prompt_key(row["prompt"]), row)
    ordered = sorted(seen.items(), key=lambda kv: hashlib.blake2b(kv[0].encode(), digest_size=8).digest())
    return [row for _, row in ordered[:n]]


def eval_overlap(data: MathDataset, streams: list[list[Example]], n_eval: int) -> Overlap:
    """Measured share of held-out prompts that also occur in an RL prompt stream (by canonical prompt)."""
    rl_keys = {prompt_key(r["prompt"]) for stream in streams for r in stream}
    held = eval_rows(data, n_eval)
    in_rl = sum(prompt_key(r["prompt"]) in rl_keys for r in held)
    share = round(in_rl / len(held), 4) if held else None
    return Overlap(
        by="normalised prompt (whitespace collapsed, case folded)",
        eval=OverlapPart(prompts=len(held), in_sft=0, in_rl=in_rl, share=share),
        share=share,
    )
