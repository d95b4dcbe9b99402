"""What the analysis stages read of a document's text (``radar.store.Document`` has it; tests pass small fakes)."""

from __future__ import annotations

from typing import Protocol


class DocumentText(Protocol):
    """A document's id, title and abstract; a stage's own Protocol adds what else it reads."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def abstract(self) -> str: ...
