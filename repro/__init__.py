"""GRPO-family reproduction runs on TRL: methods.py (presets) -> tasks.py (verifiable rewards) ->
policy.py (char-level Qwen2 + cached SFT warm start) -> trainer.py (GRPOTrainer + loss plug-ins) ->
runner.py / worker.py (run records, background worker, cancel, reaping) -> verdict.py + plots.py ->
export.py (TRL+accelerate, verl). Depends only on the store. See repro/README.md."""
