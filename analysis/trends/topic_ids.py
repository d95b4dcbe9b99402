"""Topic identity: the same data gives the same topics, ids and sizes; new data keeps old ids where topics persist.

Two pieces of state under ``WORKSPACE/index/topics/``, neither of which makes an answer depend on which runs came
before it:

- **Anchored seeds.** k-means needs a starting point, and where it starts decides where it ends. Seeding each run
  with the previous run's centroids kept topics stable week to week, but made the answer depend on the history
  of runs (two runs of the same command on the same data gave t13 with 278 papers, then t4 with 216). Now the
  start is a function of the data: the clustering of the horizon ending on the *anchor* before ``as_of`` (anchors
  every ``ANCHOR_DAYS`` on a fixed calendar grid), itself seeded by the anchor before it, ``ANCHOR_DEPTH``
  anchors deep, the deepest seeded by k-means++ with a fixed seed. Consecutive weeks share their seed, so they
  converge alike. Each anchor's centroids are cached under a key of the documents in its horizon (an unchanged
  past reuses them; a changed one is recomputed the same way).
- **The id registry.** Every cluster's centroid is kept as a *prototype* of its id, with the as-of day it was
  computed for and the label it was shown with. A run matches its clusters to the ids of the prototypes
  computed for an as-of day on or before its own (Hungarian matching on cosine similarity, ``topic_match``); an
  unmatched cluster gets the next free id. A rerun on the same data finds its own prototypes at similarity 1
  and so the same ids and labels, whatever ran in between; a later week finds last week's.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from radar.store.files import write_cache_atomic

ANCHOR_DAYS = 28
ANCHOR_DEPTH = 3
ANCHOR_EPOCH = date(2000, 1, 2)  # a Sunday: with week windows (as of a Sunday) anchors fall on Sundays
MAX_PROTOTYPES = 16  # per id, the newest kept
SAME = 0.999  # a centroid this close to a kept prototype is that prototype


def anchor_before(as_of: date) -> date:
    """The last anchor day strictly before ``as_of``."""
    offset = (as_of - ANCHOR_EPOCH).days
    steps = (offset - 1) // ANCHOR_DAYS
    return ANCHOR_EPOCH + timedelta(days=steps * ANCHOR_DAYS)


def horizon_key(model: str, window: str, day: date, depth: int, members: list[str]) -> str:
    """The cache key of an anchor's seed: the model, the anchor, the depth and the horizon's documents (ids and
    content hashes)."""
    h = hashlib.blake2b(digest_size=10)
    h.update(f"{model}|{window}|{day.isoformat()}|{depth}|".encode())
    for member in members:
        h.update(member.encode() + b"\x1f")
    return h.hexdigest()


def load_seed(folder: Path, key: str) -> np.ndarray | None:
    path = folder / "anchors" / f"{key}.npy"
    try:
        return np.load(path, allow_pickle=False).astype(np.float32)
    except (OSError, ValueError):
        return None


def save_seed(folder: Path, key: str, centroids: np.ndarray) -> None:
    buf = io.BytesIO()
    np.save(buf, centroids.astype(np.float32))
    write_cache_atomic(folder / "anchors" / f"{key}.npy", buf.getvalue())  # not kept on a full or read-only disk


@dataclass
class Registry:
    """Prototypes: one row per (id, centroid) with the as-of day it was computed for and its label."""

    window: str
    centroids: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    ids: list[str] = field(default_factory=list)
    days: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    words: list[list[str]] = field(default_factory=list)  # the label's words (a kept label must still fit)
    model: str = ""
    next_id: int = 1

    @staticmethod
    def path(folder: Path, window: str) -> Path:
        return folder / f"registry-{window}.npz"

    @classmethod
    def load(cls, folder: Path, window: str, model: str) -> Registry:
        """The registry for ``window``; an empty one when there is none, it is unreadable, or it holds another
        embedding model's centroids (their similarities mean nothing here)."""
        try:
            with np.load(cls.path(folder, window), allow_pickle=False) as z:
                meta = orjson.loads(bytes(z["meta"]))
                reg = cls(window, z["centroids"].astype(np.float32), **meta)
        except (OSError, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
            return cls(window, model=model)
        return reg if reg.model == model else cls(window, model=model, next_id=reg.next_id)

    def save(self, folder: Path) -> None:
        meta = {
            "ids": self.ids,
            "days": self.days,
            "labels": self.labels,
            "words": self.words,
            "model": self.model,
            "next_id": self.next_id,
        }
        buf = io.BytesIO()
        np.savez(buf, centroids=self.centroids, meta=np.frombuffer(orjson.dumps(meta), dtype=np.uint8))
        write_cache_atomic(self.path(folder, self.window), buf.getvalue())  # not kept on a full or read-only disk

    def assign(
        self, centroids: np.ndarray, keywords: list[list[str]], as_of: date, threshold: float
    ) -> tuple[list[str], list[str], list[list[str]]]:
        """(id, label, label words) per cluster, and the clusters recorded as prototypes."""
        from scipy.optimize import linear_sum_assignment

        day = as_of.isoformat()
        seen = [i for i, d in enumerate(self.days) if d <= day]  # never a prototype computed for a later day
        names = sorted({self.ids[i] for i in seen}, key=lambda n: int(n[1:]) if n[1:].isdigit() else 0)
        k = len(centroids)
        best = np.full((k, len(names)), -1.0)
        proto = np.full((k, len(names)), -1, dtype=np.int64)
        if seen and k:
            sim = centroids @ self.centroids[seen].T
            col = {n: j for j, n in enumerate(names)}
            for p, i in enumerate(seen):
                j = col[self.ids[i]]
                better = sim[:, p] > best[:, j]
                best[better, j], proto[better, j] = sim[better, p], i
        matched: dict[int, int] = {}
        if names and k:
            rows, cols = linear_sum_assignment(-best)
            matched = {int(r): int(c) for r, c in zip(rows, cols, strict=True) if best[r, c] >= threshold}
        out_ids, out_labels, out_words = [], [], []
        for c in range(k):
            if c not in matched:
                out_ids.append(f"t{self.next_id}")
                self.next_id += 1
                out_labels.append(" / ".join(keywords[c][:3]))
                out_words.append(keywords[c][:3])
                continue
            j = matched[c]
            p = int(proto[c, j])
            out_ids.append(names[j])
            old = self.words[p]
            if best[c, j] >= SAME or (old and sum(w in keywords[c] for w in old) >= 2):  # a kept label that fits
                out_labels.append(self.labels[p])
                out_words.append(old)
            else:
                out_labels.append(" / ".join(keywords[c][:3]))
                out_words.append(keywords[c][:3])
        self._record(centroids, out_ids, out_labels, out_words, day)
        return out_ids, out_labels, out_words

    def _record(
        self, centroids: np.ndarray, ids: list[str], labels: list[str], words: list[list[str]], day: str
    ) -> None:
        keep = list(range(len(self.ids)))
        new_rows = []
        for c, topic in enumerate(ids):
            mine = [i for i in keep if self.ids[i] == topic]
            if mine and float((self.centroids[mine] @ centroids[c]).max()) >= SAME:
                continue  # already kept (a rerun)
            new_rows.append(c)
        if not new_rows:
            return
        dim = centroids.shape[1]
        base = self.centroids if self.centroids.size else np.zeros((0, dim), dtype=np.float32)
        self.centroids = np.vstack([base, centroids[new_rows].astype(np.float32)])
        self.ids += [ids[c] for c in new_rows]
        self.days += [day] * len(new_rows)
        self.labels += [labels[c] for c in new_rows]
        self.words += [words[c] for c in new_rows]
        self._prune()

    def _prune(self) -> None:
        """At most MAX_PROTOTYPES per id: those computed for the latest days."""
        by_id: dict[str, list[int]] = {}
        for i, topic in enumerate(self.ids):
            by_id.setdefault(topic, []).append(i)
        drop = {i for rows in by_id.values() for i in sorted(rows, key=lambda r: self.days[r])[:-MAX_PROTOTYPES]}
        if not drop:
            return
        keep = [i for i in range(len(self.ids)) if i not in drop]
        self.centroids = self.centroids[keep]
        for name in ("ids", "days", "labels", "words"):
            values: list[Any] = getattr(self, name)
            setattr(self, name, [values[i] for i in keep])
