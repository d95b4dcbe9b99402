"""The workspace store, the kernel every stage depends on: radar.toml read as tables, the workspace's paths, the
SQLite connection with its migrations and transactions, atomic files, and the generic table (store/table.py) each
stage's repository builds on."""

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
