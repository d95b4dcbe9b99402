"""Trends on msgspec: a period's cached trends read back as they were written (the same bytes the code before the
codec wrote), an older file without its newer keys still reads, and a file of another shape is refused (the caller
computes the trends again) instead of failing later."""

from __future__ import annotations

import json
import math

import msgspec
import pytest
from msgspec import UNSET

from radar.analysis.trends.result import Burst, PeriodTrends, TrendsResult, decode, encode

ROW = {
    "tag": "llm-reasoning",
    "direction": "rising",
    "score": 12.5,
    "z": float("nan"),  # kept as NaN in the cached file, as json always wrote it
    "ratio": 1.8,
    "recent_count": 40,
    "recent_share": 0.05,
    "baseline_share": 0.03,
}
# rows as the code before the records wrote them, keys in their order; a key a row lacks stays out
TERM = {
    "term": "grpo",
    "aliases": ["group relative policy optimization"],
    "keys": ["grpo", "group relative policy optimization"],
    "score": 31.2,
    "z": 5.1,
    "ratio": 3.2,
    "ratio_bound": 2.1,
    "recent_count": 40,
    "compared_count": 38,
    "expected_count": 12.1,
    "recent_share": 0.05,
    "baseline_share": 0.015,
    "first_seen": None,
    "example_ids": ["2509.00001"],
    "burst": {"active": True, "since": "2025-09"},
    "coherence": {"value": 0.2, "random": 0.1, "lift": 2.0, "z": 4.0},
    "rule": "continuing rise",
    "baseline_end": "2025-06-30",
    "family": "grpo",
}
METHOD = {
    "name": "SPARK",
    "first_seen": "2025-09-02",
    "first_id": "2509.00002",
    "count": 3,
    "recent_count": 3,
    "growth": float("inf"),
    "example_ids": ["2509.00002"],
    "series": [{"period": "2025-09", "count": 3}],
    "kind": None,
    "area": "rl",
    "title": "SPARK",
    "changes": "the reward",
}
TOPIC = {
    "id": "t1",
    "label": "kv cache",
    "keywords": ["kv", "cache"],
    "size": 30,
    "recent_size": 9,
    "growth": 1.5,
    "example_ids": ["2509.00003"],
    "sample_ids": ["2509.00003", "2509.00004"],
}
TAGS = {
    "as_of": "2025-09-28",
    "window": "week",
    "recent": {"start": "2025-09-22", "end": "2025-09-28", "documents": 800},
    "baseline": {"start": "2025-07-28", "end": "2025-09-21"},
    "periods": ["2025-09-22"],
    "emerging": [TERM],
    "declining": [{k: v for k, v in TERM.items() if k not in ("burst", "coherence", "rule", "baseline_end")}],
    "tags": {"llm-reasoning": [{"period": "2025-09-22", "count": 40, "docs": 800, "share": 0.05, "raw_share": 0.05}]},
    "groups": {},
    "tag_trends": [ROW],
    "group_trends": [],
    "topics": [TOPIC, {k: v for k, v in TOPIC.items() if k != "sample_ids"}],  # an older one without sample_ids
    "topics_note": "",
    "new_methods": [METHOD, {k: v for k, v in METHOD.items() if k not in ("area", "title", "changes")}],
}
# what ``PeriodTrends.as_dict()`` gave before the codec, keys in its order
OLD = {
    "label": "2025-W39",
    "start": "2025-09-22",
    "end": "2025-09-28",
    "fingerprint": "f1",
    "computed_at": "2025-09-29T06:00:00Z",
    "tags": TAGS,
    "terms": {**TAGS, "window": "month"},
}


def test_a_cached_period_reads_back_and_is_written_as_before() -> None:
    old_bytes = json.dumps(OLD, ensure_ascii=False).encode("utf-8")
    found = decode(old_bytes, PeriodTrends)
    assert found.fingerprint == "f1" and found.terms.window == "month"
    assert math.isnan(found.tags.tag_trends[0].z)
    term = found.terms.emerging[0]
    assert (term.burst, term.rule, found.terms.declining[0].rule) == (Burst(True, "2025-09"), "continuing rise", UNSET)
    assert found.terms.new_methods[1].area is UNSET and found.terms.topics[1].sample_ids is UNSET
    assert encode(found) == old_bytes  # the same bytes, key order and NaN included


def test_an_older_file_without_the_newer_keys_reads() -> None:
    older = {k: v for k, v in OLD.items() if k not in ("fingerprint", "computed_at")}
    found = decode(json.dumps(older), PeriodTrends)
    assert (found.fingerprint, found.computed_at) == ("", "")  # unknown state: computed again by the caller


@pytest.mark.parametrize(
    "damage",
    [
        {"tags": {**TAGS, "not_a_field": 1}},  # a key this code does not know
        {"tags": {**TAGS, "tag_trends": [{**ROW, "recent_count": "40"}]}},  # a row of another type
        {"terms": {**TAGS, "tag_trends": [{k: v for k, v in ROW.items() if k != "z"}]}},  # a row missing a key
        {"tags": None},
    ],
)
def test_a_file_of_another_shape_is_refused(damage: dict[str, object]) -> None:
    with pytest.raises(ValueError):  # app.period_trends.load: None, and the trends are computed again
        decode(json.dumps({**OLD, **damage}), PeriodTrends)


def test_the_json_is_the_struct_as_msgspec_converts_it() -> None:
    result = decode(json.dumps(TAGS), TrendsResult)
    assert list(msgspec.to_builtins(result)) == list(TAGS)  # `radar trends --json`: every field, in order
    assert msgspec.to_builtins(TrendsResult.empty())["recent"] is None
