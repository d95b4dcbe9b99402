"""Build data/snapshot.jsonl.gz, the bundled offline snapshot, from ../shared/data.

Keeps every paper that looks relevant to a taxonomy tag (broad keyword match over title and
abstract), every hand-labeled paper and search target, all systems-extra papers, and a seeded
uniform sample of the rest across the whole date range. Re-run to rebuild:

    .venv/bin/python data/build_snapshot.py [--target 15000]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
OUT = Path(__file__).with_name("snapshot.jsonl.gz")
KEEP_FIELDS = ("id", "title", "abstract", "authors", "categories", "primary_category", "published", "source_repo")

RELEVANT = re.compile(
    r"\b(GRPO|DAPO|GSPO|PPO|RLHF|RLVR|RLAIF|DPO|KTO|ORPO|SimPO|reward model|process reward|"
    r"preference optimi[sz]ation|policy optimi[sz]ation|reinforcement learning from|verifiable reward|"
    r"GPU|TPU|NPU|FPGA|ASIC|accelerator|systolic|processing-in-memory|hardware accelerat\w*|CUDA|Triton|kernel fusion|"
    r"FlashAttention|compiler|pipeline parallel|tensor parallel|data parallel|expert parallel|"
    r"distributed training|ZeRO|FSDP|KV[- ]cache|speculative decoding|inference serving|serving system|"
    r"LLM serving|quantiz\w+|pruning|sparsity|low-bit|FP8|INT4|knowledge distillation|"
    r"chain-of-thought|test-time (?:scaling|compute)|reasoning model|long reasoning|"
    r"Gaussian splatting|NeRF|neural rendering|virtual reality|augmented reality|\bXR\b|metaverse)\b",
    re.I,
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--target", type=int, default=15000, help="total papers wanted")
    ap.add_argument("--seed", type=int, default=20261130)
    args = ap.parse_args()
    must = {json.loads(line)["id"] for line in (SHARED / "labels/dev.jsonl").open()}
    must |= {json.loads(line)["id"] for line in (SHARED / "data/dev_search_queries.jsonl").open()}
    relevant, rest = [], []
    with gzip.open(SHARED / "data/arxiv_corpus_full.jsonl.gz", "rt") as fh:
        for line in fh:
            rec = json.loads(line)
            if rec["id"] in must or RELEVANT.search(rec["title"] + " " + rec["abstract"]):
                relevant.append(rec)
            else:
                rest.append(rec)
    with gzip.open(SHARED / "data/arxiv_systems_extra.jsonl.gz", "rt") as fh:
        extra = [json.loads(line) for line in fh]
    rng = random.Random(args.seed)
    budget = args.target - len(extra)
    print(f"{len(relevant)} relevant of {len(relevant) + len(rest)}")
    if len(relevant) > budget * 0.8:  # keep a real background: at most 80% relevant
        forced = [r for r in relevant if r["id"] in must]
        others = [r for r in relevant if r["id"] not in must]
        relevant = forced + rng.sample(others, int(budget * 0.8) - len(forced))
    sample = rng.sample(rest, max(0, budget - len(relevant)))
    chosen = sorted(relevant + sample + extra, key=lambda r: (r["published"], r["id"]))
    with gzip.open(OUT, "wt", compresslevel=9) as out:
        for rec in chosen:
            out.write(json.dumps({k: rec[k] for k in KEEP_FIELDS if k in rec}, ensure_ascii=False) + "\n")
    print(
        f"wrote {len(chosen)} papers ({len(relevant)} relevant, {len(sample)} sampled, {len(extra)} systems) "
        f"to {OUT} ({OUT.stat().st_size / 1e6:.1f} MB)"
    )


if __name__ == "__main__":
    main()
