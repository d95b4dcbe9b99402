"""Trends on msgspec: a period's cached trends read back as they were written (the same bytes the code before the
codec wrote), an older file without its newer keys still reads, and a file of another shape is refused (the caller
computes the trends again) instead of failing later."""

from __future__ import annotations

import json
import math

import msgspec
import pytest

from radar.analysis.trends.result import PeriodTrends, TrendsResult, decode, encode

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
TAGS = {
    "as_of": "2025-09-28",
    "window": "week",
    "recent": {"start": "2025-09-22", "end": "2025-09-28", "documents": 800},
    "baseline": {"start": "2025-07-28", "end": "2025-09-21"},
    "periods": ["2025-09-22"],
    "emerging": [],
    "declining": [],
    "tags": {"llm-reasoning": [{"period": "2025-09-22", "count": 40, "docs": 800, "share": 0.05, "raw_share": 0.05}]},
    "groups": {},
    "tag_trends": [ROW],
    "group_trends": [],
    "topics": [],
    "topics_note": "",
    "new_methods": [],
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
    assert math.isnan(found.tags.tag_trends[0]["z"])
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
