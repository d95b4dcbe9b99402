"""Trend rows for tests: the records (analysis.trends.result) built from the fields a test cares about, the rest
filled with neutral values, every type checked by msgspec as a cached file's are."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from radar.analysis.trends.result import NewMethod, TermTrend, Topic, TrendsResult

TERM: dict[str, Any] = {
    "term": "",
    "aliases": [],
    "keys": [],
    "score": 0.0,
    "z": 0.0,
    "ratio": 1.0,
    "ratio_bound": 1.0,
    "recent_count": 0,
    "compared_count": 0,
    "expected_count": 0.0,
    "recent_share": 0.0,
    "baseline_share": 0.0,
    "first_seen": None,
    "example_ids": [],
}
METHOD: dict[str, Any] = {
    "name": "",
    "first_seen": "",
    "first_id": "",
    "count": 0,
    "recent_count": 0,
    "growth": 0.0,
    "example_ids": [],
    "series": [],
}
TOPIC: dict[str, Any] = {
    "id": "",
    "label": "",
    "keywords": [],
    "size": 0,
    "recent_size": 0,
    "growth": 0.0,
    "example_ids": [],
}


def term(**fields: Any) -> TermTrend:
    return msgspec.convert({**TERM, **fields}, TermTrend)


def method(**fields: Any) -> NewMethod:
    return msgspec.convert({**METHOD, **fields}, NewMethod)


def topic(**fields: Any) -> Topic:
    return msgspec.convert({**TOPIC, **fields}, Topic)


def trends(doc: Mapping[str, Any]) -> TrendsResult:
    """A ``TrendsResult`` from a JSON-shaped dict whose rows may be partial."""
    rows = {
        "emerging": [term(**t) for t in doc.get("emerging", [])],
        "declining": [term(**t) for t in doc.get("declining", [])],
        "new_methods": [method(**m) for m in doc.get("new_methods", [])],
        "topics": [topic(**t) for t in doc.get("topics", [])],
    }
    plain = {k: v for k, v in doc.items() if k not in rows}
    return msgspec.structs.replace(msgspec.convert(plain, TrendsResult), **rows)
