"""Errors of the index package."""

from __future__ import annotations

from radar.store.errors import RadarError


class IndexError_(RadarError):  # noqa: N801 - avoid shadowing the builtin IndexError
    """The embedding model or an index could not be used; the message says how to fix it."""


class NothingIndexed(IndexError_):
    """The workspace holds no vectors yet."""


class ModelNotFound(IndexError_):
    """An embedding model name or path that cannot be loaded offline."""
