"""Printing for commands: JSON documents on stdout, human text through rich on stderr/stdout."""

from __future__ import annotations

import sys
from typing import Any

import orjson
from rich.console import Console

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def print_json(doc: Any) -> None:
    sys.stdout.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n")
    sys.stdout.flush()
