"""Errors of the names stage: one line naming the fix."""

from __future__ import annotations

from radar.store.errors import RadarError


class NamesError(RadarError):
    """Names cannot be found for the given input (unknown kind, bad label file, ...)."""
