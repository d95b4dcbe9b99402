"""Errors of the trends stage: one line naming the fix."""

from __future__ import annotations

from radar.store.errors import RadarError


class TrendsError(RadarError):
    """The trends cannot be computed for the given input (no data before --as-of, bad window, ...)."""
