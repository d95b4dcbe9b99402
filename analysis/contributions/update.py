"""Incremental contributions: decide every stored paper that has no contribution by the current model for its
current text, and store it with the names it mentions (``store.contributions``).

A new week of papers costs its own papers only; a new model version recomputes every paper once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from radar.analysis.contributions.find import Contribution, decide
from radar.analysis.contributions.model import ContributionModel, shipped_model
from radar.analysis.names.aliases import surface_key
from radar.analysis.names.extract import family_of
from radar.store import Store
from radar.store.contributions import ContributionRow, Mention
from radar.store.models import Document

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class UpdateReport:
    decided: int  # papers decided in this call
    introducing: int  # ... of which introduce a name
    model: str
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "decided": self.decided,
            "introducing": self.introducing,
            "model": self.model,
            "seconds": round(self.seconds, 2),
        }


def name_key(name: str) -> str:
    """The spelling key cards and mentions share (case, hyphens and variant suffixes folded)."""
    return surface_key(name) if name else ""


def _row(doc: Document, c: Contribution) -> ContributionRow:
    return ContributionRow(
        doc_id=doc.id,
        content_hash=doc.content_hash,
        model=c.model,
        introduces=c.introduces,
        name=c.name,
        name_key=name_key(c.name),
        also=c.also,
        kind=c.kind,
        area=c.area,
        builds_on=c.builds_on,
        changes=c.changes,
        changes_rewritten="",
        code=c.code,
        score=c.score,
        kind_score=c.kind_score,
    )


def mentions(doc_id: str, contribution: Contribution, candidates: Any) -> list[Mention]:
    """The names a paper mentions by spelling key: its name-like tokens and its own names."""
    found: dict[str, bool] = {}
    own = {contribution.name, *contribution.also}
    for c in candidates:
        if "src:token" not in c.features and c.surface not in own:
            continue
        key = surface_key(c.surface) if family_of(c.surface) else ""
        if key:
            found[key] = found.get(key, False) or "compared" in c.features
    return [Mention(doc_id, k, v) for k, v in found.items()]


def update_contributions(
    store: Store, model: ContributionModel | None = None, *, progress: Progress | None = None, batch: int = 2000
) -> UpdateReport:
    """Decide the papers without a contribution by ``model`` (the shipped one by default) and store them."""
    m = model or shipped_model()
    started = time.perf_counter()
    ids = store.papers_without_contribution(m.version)
    done = introducing = 0
    for start in range(0, len(ids), batch):
        chunk = ids[start : start + batch]
        by_id = store.documents(chunk)
        introducing += decide_documents(store, [by_id[i] for i in chunk if i in by_id], m)
        done += len(chunk)
        if progress is not None:
            progress(done, len(ids))
    return UpdateReport(done, introducing, m.version, time.perf_counter() - started)


def decide_documents(store: Store, docs: Sequence[Document], model: ContributionModel) -> int:
    """Decide ``docs`` with ``model`` and store the rows and mentions (one transaction); returns how many
    introduce a name."""
    rows, found = [], []
    for doc in docs:
        c, ex = decide(doc, model)
        rows.append(_row(doc, c))
        found.extend(mentions(doc.id, c, ex.candidates))
    store.write_contributions(rows, found)
    return sum(r.introduces for r in rows)
