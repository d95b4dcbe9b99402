"""The workspace store: configuration, paths and the SQLite database. Every stage depends on it."""

from radar.store.config import Config, CrawlConfig, SourceConfig, parse_config
from radar.store.db import Store
from radar.store.errors import ConfigError, RadarError, StoreError, WorkspaceError
from radar.store.models import CrawlState, Document, UpsertCounts, iso_utc, utc_now
from radar.store.workspace import Workspace, resolve_root

__all__ = [
    "Config",
    "ConfigError",
    "CrawlConfig",
    "CrawlState",
    "Document",
    "RadarError",
    "SourceConfig",
    "Store",
    "StoreError",
    "UpsertCounts",
    "Workspace",
    "WorkspaceError",
    "iso_utc",
    "parse_config",
    "resolve_root",
    "utc_now",
]
