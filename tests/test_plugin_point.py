"""analysis/contributions/plugin_point.py: the plug-in point a new RL post-training method would need.

Its accuracy on 66 hand-labelled papers of the full corpus is measured by benchmarks/bench_plugin_point.py; here:
the week-39 methods of the bundled snapshot, the card's own fields, and what is not an RL post-training method.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest

from radar.analysis.contributions.plugin_point import plugin_point

SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "snapshot.jsonl.gz"
W39 = {"2509.22611": "advantage", "2509.18851": "advantage", "2509.21282": "ratio/loss", "2509.19803": "batch"}


@pytest.fixture(scope="module")
def papers() -> dict[str, dict[str, str]]:
    out = {}
    with gzip.open(SNAPSHOT, "rb") as fh:
        for line in fh:
            r = orjson.loads(line)
            if r["id"] in W39:
                out[r["id"]] = r
    return out


def test_week_39_methods_name_their_point(papers: dict[str, dict[str, str]]) -> None:
    """QAE (a quantile baseline) and NGRPO (advantage calibration): advantage; PSPO (smoothing before the ratio,
    instead of clipping): ratio/loss; VCRL (a variance curriculum): batch."""
    assert {i: plugin_point(p["title"], p["abstract"]) for i, p in papers.items()} == W39


def test_cues_of_each_point_and_what_is_not_a_method() -> None:
    assert plugin_point("XPO: a leave-one-out baseline", "We propose XPO, a GRPO variant whose advantage ...") == (
        "advantage"
    )
    assert plugin_point("YPO", "a policy optimization method with asymmetric clipping of the importance ratio") == (
        "ratio/loss"
    )
    assert plugin_point("ZPO", "GRPO with a curriculum that filters prompts by difficulty") == "batch"
    # a card's own fields: its changes line counts twice as much as the abstract
    assert plugin_point("WPO", "GRPO ... advantage ...", changes="clips the importance ratio per sequence") == (
        "ratio/loss"
    )
    # no cue, or not RL post-training, or not about a policy update: nothing
    assert plugin_point("A TTS model", "We train a speech model with GRPO using ASR rewards.") == ""
    assert plugin_point("KernelX", "a GPU kernel with clipping of activations", area="hardware-systems") == ""
    assert plugin_point("Clip-it", "clipping images for a vision transformer") == ""  # no RL vocabulary
