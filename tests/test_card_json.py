"""A card's JSON (`radar methods --json`, the dashboard) is a view of the card that msgspec builds: the derived
counts, null for no preset, rounded scores, a framework entry's public part, and nothing that only ranks it."""

from __future__ import annotations

import msgspec
import orjson

from radar.analysis.contributions.adoptions import Adopted
from radar.analysis.contributions.card import CardJson, MethodCard, OtherSense
from radar.analysis.contributions.consequence import Score

CARD = MethodCard(
    name="DAPO",
    kind="method",
    area="rl-post-training",
    status="introduced",
    introduced_by="2503.14476",
    title="DAPO: An Open-Source LLM Reinforcement Learning System at Scale",
    introduced_on="2025-03-18",
    week="2025-W12",
    code=("https://github.com/BytedTsinghua-SIA/DAPO",),
    changes="decoupled clip and dynamic sampling",
    builds_on=("GRPO",),
    also=(),
    used_by=("2504.00001", "2504.00002", "2505.00003"),
    compared_by=("2505.00003",),
    first_seen="2025-03-18",
    first_id="2503.14476",
    preset="",
    preset_title="",
    score=0.876543,
    prior_mentions=2,
    expansion="Decoupled Clip and Dynamic sAmpling Policy Optimization",
    other_senses=(OtherSense("Direct Alignment Policy Optimization", 2, None, "", ""),),
    in_use_at_start=True,
    plugin_point="ratio/loss",
    adopted=(Adopted("TRL", "2025-05-01", "https://x/commit/1", "commit", "Add DAPO", "name", "dapo", "2503.14476"),),
    early_uses=3,
    consequence=Score(0.912345678, 0.45678912, 3, ("builds on GRPO",), "q1", ("links its code",)),
)

EXPECTED = {
    "name": "DAPO",
    "kind": "method",
    "area": "rl-post-training",
    "status": "introduced",
    "introduced_by": "2503.14476",
    "title": "DAPO: An Open-Source LLM Reinforcement Learning System at Scale",
    "introduced_on": "2025-03-18",
    "week": "2025-W12",
    "changes": "decoupled clip and dynamic sampling",
    "builds_on": ["GRPO"],
    "also": [],
    "code": ["https://github.com/BytedTsinghua-SIA/DAPO"],
    "uses": 3,
    "compares": 1,
    "used_by": ["2504.00001", "2504.00002", "2505.00003"],
    "compared_by": ["2505.00003"],
    "first_seen": "2025-03-18",
    "first_id": "2503.14476",
    "preset": None,
    "preset_title": None,
    "plugin_point": "ratio/loss",
    "score": 0.877,
    "prior_mentions": 2,
    "expansion": "Decoupled Clip and Dynamic sAmpling Policy Optimization",
    "other_senses": [
        {
            "expansion": "Direct Alignment Policy Optimization",
            "papers": 2,
            "introduced_by": None,
            "introduced_on": "",
            "what": "",
        }
    ],
    "adopted": [
        {"framework": "TRL", "date": "2025-05-01", "link": "https://x/commit/1", "kind": "commit", "text": "Add DAPO"}
    ],
    "named": True,
    "consequence": {"score": 0.9123, "day0": 0.4568, "early_uses": 3, "evidence": ["builds on GRPO"], "version": "q1"},
}


def test_a_cards_json_is_its_documented_view() -> None:
    doc = msgspec.to_builtins(CardJson.of(CARD))
    assert doc == EXPECTED
    assert list(doc) == list(EXPECTED)  # the documented key order (`--json` sorts them when it prints)
    assert orjson.loads(orjson.dumps(doc)) == EXPECTED  # plain JSON values


def test_a_covering_preset_is_named() -> None:
    from dataclasses import replace

    doc = msgspec.to_builtins(CardJson.of(replace(CARD, preset="dapo", preset_title="DAPO (decoupled clip ...)")))
    assert (doc["preset"], doc["preset_title"]) == ("dapo", "DAPO (decoupled clip ...)")
