"""Rebuild the shipped model (``model.json``) from the shipped labels:
``python -m radar.analysis.contributions.retrain``.

Deterministic: the same labels give the same file (a slow test checks the shipped one is what they train).
"""

from __future__ import annotations

from pathlib import Path

from radar.analysis.contributions.labels import load_labeled
from radar.analysis.contributions.model import MODEL_FILE, train


def main() -> int:
    model = train(load_labeled())
    path = Path(__file__).with_name(MODEL_FILE)
    path.write_bytes(model.to_json())
    print(f"wrote {path} ({model.version})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
