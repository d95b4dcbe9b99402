"""The exception base every Research Radar package derives from.

Each error carries a one-line message that names the fix; the CLI prints it and
turns it into an exit code. Nothing else prints tracebacks at users.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")  # and the Unicode line/paragraph separators


def one_line(message: str) -> str:
    """A message that stays one line wherever it is shown: control characters (a newline or an escape
    code in a value the user typed or a file held) are shown escaped."""
    return _CONTROL.sub(lambda m: ascii(m.group())[1:-1], message)


class RadarError(Exception):
    """Base of all expected errors. ``exit_code`` 1 = usage/input, 2 = partial failure."""

    exit_code = 1

    def __init__(self, message: str, **context: object) -> None:
        super().__init__(one_line(message))
        self.context = context

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else self.__class__.__name__


class ConfigError(RadarError):
    """radar.toml or a command-line value is invalid."""


class WorkspaceError(RadarError):
    """The workspace is missing or unusable."""


class StoreError(RadarError):
    """The database could not be read or written."""
