"""``Radar``: one workspace and its settings, what every step and page is handed.

Light to import (no numpy, no models): the CLI builds one per command, the dashboard one per session.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from radar.analysis.tags.taxonomy import Taxonomy, load_taxonomy
from radar.app.settings import Settings, load_settings
from radar.store import Store, Workspace
from radar.store.errors import RadarError, one_line


@dataclass
class Radar:
    """One workspace and its settings (radar.toml read once, on first use)."""

    ws: Workspace
    _settings: Settings | None = field(default=None, repr=False)

    @classmethod
    def at(cls, root: Path) -> Radar:
        return cls(Workspace.open(root))

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = load_settings(self.ws)
            if self.ws.config_unreadable:  # a workspace owned by another user: read with the defaults, said once
                print(f"radar: note: {one_line(self.ws.config_unreadable)}", file=sys.stderr)
            for note in self._settings.crawler.notes:  # a source's keys of another source type, ignored
                print(f"radar: note: {one_line(note)}", file=sys.stderr)
        return self._settings

    def store(self) -> Store:
        return self.ws.store()

    @cached_property
    def taxonomy(self) -> Taxonomy:
        return load_taxonomy(self.settings.taxonomy_path)

    def tag_groups(self) -> dict[str, list[str]] | None:
        """Tag groups from the taxonomy; None when the taxonomy is broken (the tagger reports that)."""
        try:
            return {g: list(names) for g, names in self.taxonomy.groups.items()}
        except RadarError:
            return None
