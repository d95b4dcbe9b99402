#!/usr/bin/env bash
# GPU check for the repro module, one script that ends within 5 minutes.
#
#   bash benchmarks/gpu_repro_check.sh          # writes figures to $OUT (default /tmp/radar-gpu-check)
#
# With a CUDA GPU visible to torch: dapo vs grpo on addition with the `small` preset (~27M-parameter
# Qwen2, trained from scratch, SFT warm start then GRPO-family RL), 3 seeds, short schedule.
# Without one (or without torch/trl): says why, then runs a shortened tiny CPU run so the script still
# checks the code path and exits 0; it never fails just because no GPU was lent.
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

if "$PY" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)"; then
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee -a "$OUT/environment.txt"
  timeout --signal=TERM 285 "$PY" benchmarks/bench_repro.py --preset small --device cuda --task addition \
    --method dapo --baseline grpo --seeds 3 --steps 60 --once --workspace "$OUT/ws" --json "$OUT/bench_repro_gpu.json" \
    2>&1 | tee "$OUT/bench_repro_gpu.txt"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 124 ] && echo "gpu_repro_check: stopped at the 285 s limit; partial logs in $OUT/ws/runs/*/log.txt"
  exit "$rc"
fi

echo "gpu_repro_check: torch sees no CUDA GPU; falling back to a shortened tiny CPU run (not a GPU figure)."
timeout --signal=TERM 285 "$PY" benchmarks/bench_repro.py --preset tiny --device cpu --task sorting \
  --method dapo --baseline grpo --seeds 2 --steps 40 --once --workspace "$OUT/ws" --json "$OUT/bench_repro_cpu.json" \
  2>&1 | tee "$OUT/bench_repro_cpu.txt"
exit "${PIPESTATUS[0]}"
