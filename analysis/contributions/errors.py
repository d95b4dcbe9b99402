"""Errors of the contributions stage: one line naming the fix."""

from __future__ import annotations

from radar.store.errors import RadarError


class ContributionsError(RadarError):
    """Contributions or cards cannot be computed for the given input (bad week, unknown name, bad labels)."""
