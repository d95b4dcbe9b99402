#!/usr/bin/env bash
# GPU check for the repro module: one script, under 7 minutes on one GPU.
#
#   bash benchmarks/gpu_repro_check.sh             # CUDA when torch sees a GPU
#   DEVICE=cpu bash benchmarks/gpu_repro_check.sh  # the same two runs on CPU (smaller), to prove the script
#
# 1. the `small` preset (toy task, ~25M-parameter Qwen2 from scratch: SFT warm start, then RL):
#    dapo vs grpo on addition-work (answers terse or with working: the overlong buffer, dynamic sampling and
#    length effects can engage), 2 seed pairs, short schedule (tiny preset with DEVICE=cpu);
# 2. the real-checkpoint path (`--model`/`--dataset`): a randomly initialised Qwen2 saved with a BPE
#    tokenizer and a chat template, a 200-problem JSONL, dapo vs grpo-kl (beta 0.04: the reference
#    model's cost shows in the profile), 2 seed pairs, preset ckpt-quick;
# 3. a plug-in preset against its baseline: qae (the advantage plug-in: a quantile baseline) vs grpo on the
#    toy task, 2 seed pairs, short schedule: its mechanism rate (the share of zero advantages) is printed.
# Each prints its power before training (the minimum detectable effect at its seed pairs), then its
# verdict, class of evidence and claim (or "not testable here" with the lever's rate), the mechanism
# table per arm (overlong punishment, lower/upper clip fractions, capped weights, zero-variance groups
# as generated and as trained, lengths of right and wrong answers, length trend) and the efficiency
# profile table (generation / reward / reference / optimisation time per step, tokens per second, peak
# memory). Figures go to $OUT; the last lines repeat each run's MDE and mechanism rates.
# Without a GPU and without DEVICE=cpu it says so and runs the CPU variant; it never fails just
# because no GPU was lent. Each run has its own time limit so the whole script ends within 7 minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/radar-gpu-check}"
mkdir -p "$OUT"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false

PY="${PY:-}"
for candidate in "$PY" .venv/bin/python python3 python; do
  [ -n "$candidate" ] || continue
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "import torch, trl, transformers" 2>/dev/null; then
    PY="$candidate"; break
  fi
  PY=""
done
if [ -z "$PY" ]; then
  echo "gpu_repro_check: no Python with torch, trl and transformers here; install the project (make setup" \
       "TORCH=torch) first. Nothing was run." | tee "$OUT/gpu_repro_check.txt"
  exit 0
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
"$PY" - <<'PY' | tee "$OUT/environment.txt"
import torch, trl, transformers
print(f"torch {torch.__version__} (cuda build {torch.version.cuda}), trl {trl.__version__}, transformers {transformers.__version__}")
print("cuda available:", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")
PY

DEVICE="${DEVICE:-}"
if [ -z "$DEVICE" ]; then
  if "$PY" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)"; then
    DEVICE=cuda
  else
    echo "gpu_repro_check: torch sees no CUDA GPU; running the CPU variant (not a GPU figure)."
    DEVICE=cpu
  fi
fi
if [ "$DEVICE" = cuda ]; then
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee -a "$OUT/environment.txt"
  TOY=(--preset small --task addition-work --seeds 2 --steps 40)
  CKPT=(--tiny-hidden 256 --preset ckpt-quick --seeds 2 --steps 10)
  PLUGIN=(--preset small --task addition --seeds 2 --steps 20)
  TOY_LIMIT=170; CKPT_LIMIT=110; PLUGIN_LIMIT=120
else
  TOY=(--preset tiny --task addition-work --seeds 2 --steps 20)
  CKPT=(--tiny-hidden 32 --preset ckpt-quick --seeds 2 --steps 4)
  PLUGIN=(--preset tiny --task addition --seeds 2 --steps 10)
  TOY_LIMIT=${TOY_LIMIT:-600}; CKPT_LIMIT=${CKPT_LIMIT:-600}; PLUGIN_LIMIT=${PLUGIN_LIMIT:-600}
fi

rc=0
echo "== 1/3: toy task, ${TOY[*]}, device $DEVICE"
timeout --signal=TERM "$TOY_LIMIT" "$PY" benchmarks/bench_repro.py "${TOY[@]}" --device "$DEVICE" \
  --method dapo --baseline grpo --once --workspace "$OUT/ws-toy" --json "$OUT/repro_toy_$DEVICE.json" \
  2>&1 | grep -v -e "Warning" -e "warnings.warn" -e "Loading weights" | tee "$OUT/repro_toy_$DEVICE.txt"
r=${PIPESTATUS[0]}; [ "$r" -eq 124 ] && echo "gpu_repro_check: toy run stopped at its ${TOY_LIMIT} s limit"
[ "$r" -ne 0 ] && rc=$r

echo "== 2/3: real-checkpoint path (tiny saved Qwen2 + JSONL), ${CKPT[*]}, device $DEVICE"
timeout --signal=TERM "$CKPT_LIMIT" "$PY" benchmarks/bench_repro.py --tiny-checkpoint "$OUT/tiny-ckpt" "${CKPT[@]}" \
  --device "$DEVICE" --method dapo --baseline grpo-kl --once --workspace "$OUT/ws-ckpt" \
  --json "$OUT/repro_ckpt_$DEVICE.json" \
  2>&1 | grep -v -e "Warning" -e "warnings.warn" -e "Loading weights" | tee "$OUT/repro_ckpt_$DEVICE.txt"
r=${PIPESTATUS[0]}; [ "$r" -eq 124 ] && echo "gpu_repro_check: checkpoint run stopped at its ${CKPT_LIMIT} s limit"
[ "$r" -ne 0 ] && rc=$r

echo "== 3/3: a plug-in preset, qae vs grpo, ${PLUGIN[*]}, device $DEVICE"
timeout --signal=TERM "$PLUGIN_LIMIT" "$PY" benchmarks/bench_repro.py "${PLUGIN[@]}" --device "$DEVICE" \
  --method qae --baseline grpo --once --workspace "$OUT/ws-plugin" --json "$OUT/repro_plugin_$DEVICE.json" \
  2>&1 | grep -v -e "Warning" -e "warnings.warn" -e "Loading weights" | tee "$OUT/repro_plugin_$DEVICE.txt"
r=${PIPESTATUS[0]}; [ "$r" -eq 124 ] && echo "gpu_repro_check: plug-in run stopped at its ${PLUGIN_LIMIT} s limit"
[ "$r" -ne 0 ] && rc=$r
echo "== summary: power and mechanisms"
"$PY" - "$OUT" "$DEVICE" <<'PY' | tee "$OUT/summary_$DEVICE.txt"
import json, sys
from pathlib import Path
out, device = Path(sys.argv[1]), sys.argv[2]
for name in ("toy", "ckpt", "plugin"):
    path = out / f"repro_{name}_{device}.json"
    if not path.is_file():
        print(f"{name}: no result ({path} missing)")
        continue
    row = list(json.loads(path.read_text())["rows"].values())[-1]
    power = row["evidence"]["power"]
    mde = "n/a" if power.get("mde") is None else f"{100 * power['mde']:.1f} pts at {power['seeds']} pairs"
    print(f"{name}: {row['evidence']['class']}; MDE {mde}; claim {row['claim']}")
    for arm, m in row["mechanisms"].items():
        rates = ", ".join(
            f"{k} {'n/a' if m.get(k) is None else (f'{100 * m[k]:.2f}%' if 'length' not in k else f'{m[k]:.2f}')}"
            for k in ("overlong_rate", "clip_low", "clip_high", "capped_share", "zero_var_share", "zero_var_trained",
                      "length", "length_slope", "correct_length", "incorrect_length")
        )
        print(f"  {arm}: {rates}")
        known = {"overlong_rate", "clip_low", "clip_high", "clip_region", "capped_share", "zero_var_share",
                 "zero_var_trained", "resampled_groups", "kl", "length", "length_slope", "correct_length",
                 "incorrect_length", "length_range", "per_seed"}
        extra = {k: v for k, v in m.items() if k not in known and v is not None}
        if extra:  # the plug-ins' own rates (qae: zero_adv_share)
            print(f"  {arm} plug-in rates: " + ", ".join(f"{k} {v:.4g}" for k, v in sorted(extra.items())))
PY
echo "gpu_repro_check: done (exit $rc); figures in $OUT"
exit "$rc"
