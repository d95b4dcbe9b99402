"""Incremental contributions: decide every stored paper that has no contribution by the current model for its
current text, and store it with the names it mentions (``table.Contributions``).

A new week of papers costs its own papers only; a new model version recomputes every paper once.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, fields
from functools import cache
from multiprocessing import get_context
from typing import Any

from radar.analysis.contributions.extract import spelled_by
from radar.analysis.contributions.find import Contribution, decide
from radar.analysis.contributions.linear import encode
from radar.analysis.contributions.model import ContributionModel, shipped_model
from radar.analysis.contributions.prebuilt import PrebuiltContributions
from radar.analysis.contributions.table import ContributionRow, Contributions, Mention
from radar.analysis.names.aliases import surface_key
from radar.analysis.names.extract import family_of
from radar.crawler.documents import Document, Documents
from radar.store.table import Database

Progress = Callable[[int, int], None]
PARALLEL_MIN = 6000  # papers waiting before worker processes pay off (each starts in about a second)
MAX_WORKERS = 4


@dataclass(frozen=True, slots=True)
class UpdateReport:
    decided: int  # papers decided in this call
    introducing: int  # ... of which introduce a name
    model: str
    seconds: float
    reused: int = 0  # ... of which were taken from a prebuilt file (the same rows deciding gives)


def name_key(name: str) -> str:
    """The spelling key cards and mentions share (case, hyphens and variant suffixes folded)."""
    return surface_key(name) if name else ""


# what a stored row takes from the decision as it is: the fields both have (a field added to both is stored)
_DECIDED = tuple(f.name for f in fields(Contribution) if f.name in {g.name for g in fields(ContributionRow)})


def _row(doc: _Text | Document, c: Contribution) -> ContributionRow:
    return ContributionRow(
        content_hash=doc.content_hash,
        name_key=name_key(c.name),
        changes_rewritten="",
        **{f: getattr(c, f) for f in _DECIDED if f != "doc_id"},
        doc_id=doc.id,
    )


def mentions(doc_id: str, contribution: Contribution, candidates: Any) -> list[Mention]:
    """The names a paper mentions by spelling key: its name-like tokens and its own names, with whether it
    compares against them and the long form it gives them (the acronym's sense)."""
    found: dict[str, tuple[bool, str]] = {}
    own = {contribution.name, *contribution.also}
    for c in candidates:
        if "src:token" not in c.features and c.surface not in own:
            continue
        key = surface_key(c.surface) if family_of(c.surface) else ""
        if key:
            compared, expansion = found.get(key, (False, ""))
            spelled = c.expansion[:120] if c.expansion and spelled_by(c.surface, c.expansion) else ""
            found[key] = (compared or "compared" in c.features, expansion or spelled)
    return [Mention(doc_id, k, compared, expansion) for k, (compared, expansion) in found.items()]


def update_contributions(
    store: Database,
    model: ContributionModel | None = None,
    *,
    progress: Progress | None = None,
    batch: int = 2000,
    workers: int = 0,
    prebuilt: PrebuiltContributions | None = None,
) -> UpdateReport:
    """Decide the papers without a contribution by ``model`` (the shipped one by default) and store them.

    ``workers``: processes deciding batches while this one stores them (0: one per CPU core, up to
    ``MAX_WORKERS``, when at least ``PARALLEL_MIN`` papers wait, else none; 1: none). ``prebuilt``: rows
    the same model decided for the same texts (``prebuilt.py``), stored as they are instead of deciding."""
    m = model or shipped_model()
    started = time.perf_counter()
    ids = Contributions(store).papers_without_contribution(m.version)
    reused = reused_introducing = 0
    if prebuilt is not None and prebuilt.model == m.version and ids:
        ids, reused, reused_introducing = _store_prebuilt(store, ids, prebuilt, batch)
    if workers == 0:
        workers = min(os.cpu_count() or 1, MAX_WORKERS) if len(ids) >= PARALLEL_MIN else 1
    chunks = [ids[i : i + batch] for i in range(0, len(ids), batch)]
    done = introducing = 0

    def stored(rows: list[ContributionRow], found: list[Mention]) -> None:
        nonlocal done, introducing
        Contributions(store).write_contributions(rows, found)
        done += len(rows)
        introducing += sum(r.introduces for r in rows)
        if progress is not None:
            progress(done, len(ids))

    if workers <= 1 or len(chunks) <= 1:
        for chunk in chunks:
            by_id = Documents(store).of(chunk)
            stored(*_decided([by_id[i] for i in chunk if i in by_id], m))
    else:
        model_json = encode(m)
        with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
            pending = []
            for chunk in chunks:
                by_id = Documents(store).of(chunk)
                texts = [_Text.of(by_id[i]) for i in chunk if i in by_id]
                pending.append(pool.submit(_decide_in_worker, texts, model_json))
                while len(pending) > workers * 2:  # bounded memory: store the oldest before reading more
                    stored(*pending.pop(0).result())
            for future in pending:
                stored(*future.result())
    seconds = time.perf_counter() - started
    return UpdateReport(done + reused, introducing + reused_introducing, m.version, seconds, reused)


def _store_prebuilt(
    store: Database, ids: list[str], prebuilt: PrebuiltContributions, batch: int
) -> tuple[list[str], int, int]:
    """Store the prebuilt rows of ``ids`` whose content hash is the stored one; returns the ids left to decide,
    how many were stored and how many of those introduce a name."""
    left: list[str] = []
    reused = introducing = 0
    for start in range(0, len(ids), batch):
        chunk = ids[start : start + batch]
        hashes = Documents(store).content_hashes(chunk)
        rows: list[ContributionRow] = []
        found: list[Mention] = []
        for doc_id in chunk:
            hit = prebuilt.get(doc_id, hashes.get(doc_id, ""))
            if hit is None:
                left.append(doc_id)
                continue
            rows.append(hit[0])
            found.extend(hit[1])
        if rows:
            Contributions(store).write_contributions(rows, found)
            reused += len(rows)
            introducing += sum(r.introduces for r in rows)
    return left, reused, introducing


@dataclass(frozen=True, slots=True)
class _Text:
    """What a worker process needs of a document (``PaperText`` plus the content hash)."""

    id: str
    title: str
    abstract: str
    categories: tuple[str, ...]
    content_hash: str

    @classmethod
    def of(cls, doc: Document) -> _Text:
        return cls(doc.id, doc.title, doc.abstract, doc.categories, doc.content_hash)


@cache
def _worker_model(model_json: bytes) -> ContributionModel:
    return ContributionModel.decode(model_json)


def _decide_in_worker(texts: list[_Text], model_json: bytes) -> tuple[list[ContributionRow], list[Mention]]:
    return _decided(texts, _worker_model(model_json))


def _decided(docs: Sequence[_Text | Document], model: ContributionModel) -> tuple[list[ContributionRow], list[Mention]]:
    rows, found = [], []
    for doc in docs:
        c, ex = decide(doc, model)
        rows.append(_row(doc, c))
        found.extend(mentions(doc.id, c, ex.candidates))
    return rows, found


def decide_documents(store: Database, docs: Sequence[Document], model: ContributionModel) -> int:
    """Decide ``docs`` with ``model`` and store the rows and mentions (one transaction); returns how many
    introduce a name."""
    rows, found = _decided(docs, model)
    Contributions(store).write_contributions(rows, found)
    return sum(r.introduces for r in rows)
