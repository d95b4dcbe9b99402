"""GRPO-family reproduction runs (filled by the repro issue)."""
