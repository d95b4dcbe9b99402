"""The parts of a ``compute_trends`` answer kept between calls: a call whose inputs did not change recomputes nothing.

Each part is one JSON file under ``WORKSPACE/index/trends/parts/``, named by a hash of everything the part reads and
holding that key in full (a hash collision is a miss, not a wrong answer):

- every part: the code it is computed by (``code_version``: the trends stage's and the method cards' files), the
  documents' version (``cache.documents_version``: the store's count, last rowid and last change,
  and the last second's content hashes, as the term cache is keyed), the term rules (``cache.CACHE_VERSION``,
  ``cache.RULES``), the [trends] settings, the as-of day asked for ("newest": the store's own default) and the
  window; the frame (as-of day, windows, periods, the recent window's documents) and the emerging and declining
  terms read nothing else;
- the tag series: also the tags' fingerprint and the taxonomy's groups;
- the topics: also the embeddings' generation and model (the anchored seeds and the id registry make the same
  inputs give the same topics and ids: topic_ids.py);
- the new methods: also ``TrendsEnv.methods_version``, the version of what the method cards read (given by the
  composition root); without one, or without cards (the plain first-seen names), they are computed on every
  call. Their key is read again after the contributions are brought up to date and after the cards are read: they
  are kept under it only when the two agree (another process's write in between: not kept).

A part's value is saved as its JSON (``msgspec.to_builtins``) and read back as its type (``msgspec.convert``, every
value checked): a saved value of another shape is a miss, and a fresh value is returned as a saved one reads back.

A part that is missing, unreadable or of another key is computed and saved (written atomically; on a full or
read-only disk it is only not kept). The newest ``KEEP`` files of each part are kept.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar, cast

import msgspec

from radar.analysis.trends.config import TrendsConfig
from radar.store.files import write_cache_atomic

KEEP = 12  # files per part: the as-of days and windows the report, the dashboard and the backtests ask for
T = TypeVar("T")
# the code a part's value comes from: the trends stage and what the new methods' cards read (their modules, the
# shipped model and the label files), so that an upgrade never reads back what the code before it computed
CODE_PACKAGES = ("radar.analysis.trends", "radar.analysis.contributions")


@cache
def code_version() -> str:
    """A hash of every file of ``CODE_PACKAGES`` (sources and shipped data; computed once per process)."""
    h = hashlib.blake2b(digest_size=8)
    for package in CODE_PACKAGES:
        stack = [(package, resources.files(package))]
        while stack:
            prefix, folder = stack.pop()
            for item in sorted(folder.iterdir(), key=lambda i: i.name):
                if item.name == "__pycache__" or item.name.endswith((".pyc", ".pyo")):
                    continue
                if item.is_dir():
                    stack.append((f"{prefix}/{item.name}", item))
                elif item.is_file():
                    data = item.read_bytes()
                    h.update(f"{prefix}/{item.name}\x1f{len(data)}\x1e".encode())
                    h.update(data)
    return h.hexdigest()


def numpy_builtins(value: object) -> object:
    """msgspec's ``enc_hook`` for what a computation leaves behind (the trends' parts, report.json): a NumPy scalar or
    array as the Python value it holds (NaN and infinities kept); anything else is refused (TypeError, one line)."""
    if type(value).__module__ == "numpy" and callable(tolist := getattr(value, "tolist", None)):
        return tolist()
    raise TypeError(f"{type(value).__name__} is not JSON")


def _dumps(value: object) -> bytes:
    return json.dumps(msgspec.to_builtins(value, enc_hook=numpy_builtins), ensure_ascii=False).encode("utf-8")


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

    def load(self, name: str, inputs: Sequence[str], shape: Any = Any) -> object | None:
        """The saved value of part ``name`` for these inputs, or None (also when it is not of type ``shape``)."""
        if self.folder is None:
            return None
        key = self.key(name, inputs)
        try:
            saved = json.loads(self._path(name, key).read_bytes())
        except (OSError, ValueError, RecursionError):
            return None
        if not isinstance(saved, dict) or saved.get("key") != key:
            return None
        value = saved.get("value")
        if value is None:
            return None
        try:
            found: object = msgspec.convert(value, shape)
        except msgspec.ValidationError:
            return None
        return found

    def save(self, name: str, inputs: Sequence[str], value: object) -> None:
        if self.folder is None:
            return
        key = self.key(name, inputs)
        if write_cache_atomic(self._path(name, key), _dumps({"key": key, "value": value})):
            self._prune(name)

    def _prune(self, name: str) -> None:
        """Keep the newest ``KEEP`` files of part ``name``; another process pruning (or saving) at the same time may
        remove a file between the listing and its stat or unlink: it is gone, as wanted."""
        assert self.folder is not None
        found: list[tuple[int, Path]] = []
        for path in self.folder.glob(f"{name}-*.json"):
            try:
                found.append((path.stat().st_mtime_ns, path))
            except OSError:
                continue
        for _, path in sorted(found, reverse=True)[KEEP:]:
            try:
                path.unlink(missing_ok=True)
            except OSError:
                continue

    def get(
        self,
        name: str,
        inputs: Sequence[str],
        compute: Callable[[], T],
        *,
        shape: Any = Any,
        inputs_after: Callable[[], Sequence[str] | None] | None = None,
    ) -> T:
        """Part ``name``: the saved value when its inputs are unchanged and it is of type ``shape``, else
        ``compute()``, saved under its inputs (``inputs_after()`` when given: the inputs as they are once it was
        computed; None: not saved)."""
        if self.folder is None:
            return compute()
        found = self.load(name, inputs, shape)
        if found is not None:
            return cast(T, found)  # the part's own type (checked), written by save() under the same key
        # returned as it is saved and read back (tuples as lists, NumPy scalars as Python's), so a warm call returns
        # what a cold one did
        value = json.loads(_dumps(compute()))
        after = inputs_after() if inputs_after is not None else inputs
        if after is not None:
            self.save(name, after, value)
        return cast(T, msgspec.convert(value, shape))
