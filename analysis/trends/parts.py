"""The parts of a ``compute_trends`` answer kept between calls: a call whose inputs did not change recomputes nothing.

Each part is one JSON file under ``WORKSPACE/index/trends/parts/``, named by a hash of everything the part reads and
holding that key in full (a hash collision is a miss, not a wrong answer):

- every part: the documents' version (``cache.documents_version``: the store's count, last rowid and last change,
  and the last second's content hashes, as the term cache is keyed), the term rules (``cache.CACHE_VERSION``,
  ``cache.RULES``), the [trends] settings, the as-of day asked for ("newest": the store's own default) and the
  window; the frame (as-of day, windows, periods, the recent window's documents) and the emerging and declining
  terms read nothing else;
- the tag series: also the tags' fingerprint and the taxonomy's groups;
- the topics: also the embeddings' generation and model (the anchored seeds and the id registry make the same
  inputs give the same topics and ids: topic_ids.py);
- the new methods: also ``TrendsEnv.methods_version``, the version of what the method cards read (given by the
  composition root); without one, or without cards (the plain first-seen names), they are computed on every
  call. Their key is read again after they are computed (computing them may bring the contributions up to date
  first), so the next call finds them.

A part that is missing, unreadable or of another key is computed and saved (written atomically; on a full or
read-only disk it is only not kept). The newest ``KEEP`` files of each part are kept.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TypeVar, cast

import numpy as np

from radar.analysis.trends.config import TrendsConfig
from radar.store.files import write_cache_atomic

KEEP = 12  # files per part: the as-of days and windows the report, the dashboard and the backtests ask for
T = TypeVar("T")


def _plain(value: object) -> object:
    """NumPy scalars and arrays as JSON (json's ``default``); NaN and infinities are kept, as the period cache
    keeps them."""
    if isinstance(value, np.generic | np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON")


def _dumps(value: object) -> bytes:
    return json.dumps(value, default=_plain, ensure_ascii=False).encode("utf-8")


def settings_key(cfg: TrendsConfig) -> str:
    return hashlib.blake2b(repr(asdict(cfg)).encode(), digest_size=8).hexdigest()


class Parts:
    """The parts of one ``compute_trends`` call (``base``: the inputs every part reads) in ``folder`` (None: nothing
    is kept, every part is computed)."""

    def __init__(self, folder: Path | None, base: Sequence[str]) -> None:
        self.folder, self.base = folder, "|".join(base)

    def key(self, name: str, inputs: Sequence[str]) -> str:
        return "|".join([name, self.base, *inputs])

    def _path(self, name: str, key: str) -> Path:
        assert self.folder is not None
        return self.folder / f"{name}-{hashlib.blake2b(key.encode(), digest_size=10).hexdigest()}.json"

    def load(self, name: str, inputs: Sequence[str]) -> object | None:
        """The saved value of part ``name`` for these inputs, or None."""
        if self.folder is None:
            return None
        key = self.key(name, inputs)
        try:
            saved = json.loads(self._path(name, key).read_bytes())
        except (OSError, ValueError):
            return None
        return saved.get("value") if isinstance(saved, dict) and saved.get("key") == key else None

    def save(self, name: str, inputs: Sequence[str], value: object) -> None:
        if self.folder is None:
            return
        key = self.key(name, inputs)
        if write_cache_atomic(self._path(name, key), _dumps({"key": key, "value": value})):
            older = sorted(self.folder.glob(f"{name}-*.json"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
            for path in older[KEEP:]:
                path.unlink(missing_ok=True)

    def get(
        self,
        name: str,
        inputs: Sequence[str],
        compute: Callable[[], T],
        *,
        inputs_after: Callable[[], Sequence[str]] | None = None,
    ) -> T:
        """Part ``name``: the saved value when its inputs are unchanged, else ``compute()``, saved under its inputs
        (``inputs_after()`` when given: the inputs as they are once it was computed)."""
        if self.folder is None:
            return compute()
        found = self.load(name, inputs)
        if found is not None:
            return cast(T, found)  # JSON of the part's own TypedDict, written by save() under the same key
        # returned as it is saved (tuples as lists, NumPy scalars as Python's), so a warm call returns what a cold
        # one did
        value = cast(T, json.loads(_dumps(compute())))
        self.save(name, inputs_after() if inputs_after is not None else inputs, value)
        return value
