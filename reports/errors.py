"""Errors of the report stage; the CLI prints each as one line and exits with its code."""

from __future__ import annotations

from radar.store.errors import RadarError


class ReportError(RadarError):
    """A report cannot be built or written (bad --week, unknown format, missing input)."""


class DeliveryError(RadarError):
    """Some deliveries failed; the report files are written and the failures are retried next run."""

    exit_code = 2
