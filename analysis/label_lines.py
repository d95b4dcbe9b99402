"""The one reader of the shipped JSON-lines label files (contributions' introductions, leads and adoptions, the
names stage's kinds): a value per non-blank line, and a line that does not read raises its stage's error naming it."""

from __future__ import annotations

from collections.abc import Callable
from typing import AnyStr, TypeVar

T = TypeVar("T")


def json_lines(text: AnyStr, read: Callable[[AnyStr], T], error: Callable[[int], Exception]) -> list[T]:
    """``read`` of each non-blank line of ``text``, in order. A line ``read`` cannot take (not JSON, a key missing,
    a value of another type: ``orjson``'s and ``msgspec``'s errors are ``ValueError``s) raises ``error(n)``, ``n``
    its 1-based line number."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(read(line))
        except (ValueError, KeyError, TypeError, AttributeError):
            raise error(n) from None
    return out
