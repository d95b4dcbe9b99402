"""The exception base every Research Radar package derives from.

Each error carries a one-line message that names the fix; the CLI prints it and
turns it into an exit code. Nothing else prints tracebacks at users.
"""

from __future__ import annotations


class RadarError(Exception):
    """Base of all expected errors. ``exit_code`` 1 = usage/input, 2 = partial failure."""

    exit_code = 1

    def __init__(self, message: str, **context: object) -> None:
        super().__init__(message)
        self.context = context

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else self.__class__.__name__


class ConfigError(RadarError):
    """radar.toml or a command-line value is invalid."""


class WorkspaceError(RadarError):
    """The workspace is missing or unusable."""


class StoreError(RadarError):
    """The database could not be read or written."""
