"""Errors of the tagging stage."""

from __future__ import annotations

from radar.store.errors import RadarError


class TaggingError(RadarError):
    """A taxonomy, label file or tagging request is unusable; the message names the fix."""
