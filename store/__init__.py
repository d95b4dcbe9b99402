"""The workspace store: radar.toml read as tables, paths and the SQLite database (one module per table, each with its
named row types). Every stage depends on it."""

from radar.store.config import Config, parse_config
from radar.store.db import Store
from radar.store.errors import ConfigError, RadarError, StoreError, WorkspaceError
from radar.store.models import UpsertCounts, iso_utc, utc_now
from radar.store.workspace import Workspace, resolve_root

__all__ = [
    "Config",
    "ConfigError",
    "RadarError",
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
