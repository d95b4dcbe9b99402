"""JSON from files a user or another machine wrote (a library export, a copied workspace's report.json): its
nesting depth is checked before it is parsed, so a file nested 200,000 deep is one "too deeply nested" line,
not a RecursionError. The check counts brackets outside strings (no Python recursion, linear time)."""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 100  # far above any real CSL item or report (a few levels), far below Python's recursion limit
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")


def depth(text: str) -> int:
    """The deepest nesting of [ and { in ``text`` (strings skipped)."""
    deepest = level = 0
    for c in _NOT_BRACKETS.sub("", _STRINGS.sub("", text)):
        if c in "[{":
            level += 1
            deepest = max(deepest, level)
        else:
            level -= 1
    return deepest


def loads_bounded(text: str, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` for untrusted text; ValueError (one line) when it is invalid or nested deeper than
    ``max_depth``."""
    found = depth(text)
    if found > max_depth:
        raise ValueError(f"nested {found:,} levels deep (at most {max_depth})")
    try:
        return json.loads(text)
    except RecursionError:  # unreachable after the depth check; kept as a guard
        raise ValueError(f"nested too deeply (at most {max_depth})") from None
