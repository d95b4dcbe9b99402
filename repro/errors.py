"""The repro package's one exception base; the CLI turns it into a one-line message and exit 1."""

from __future__ import annotations

from radar.store.errors import RadarError


class ReproError(RadarError):
    """A reproduction run could not be set up, found or exported (the message names the fix)."""


class RunCancelled(ReproError):  # noqa: N818 - a signal, not a failure
    """Raised inside a worker when the run's cancel flag was set."""
