"""Printing for commands: JSON documents on stdout, human text through rich on stderr/stdout."""

from __future__ import annotations

import sys
from collections.abc import Collection, Sequence
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def print_json(doc: Any) -> None:
    sys.stdout.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode() + "\n")
    sys.stdout.flush()


def keep_whole(table: Table, rows: Sequence[Sequence[Any]], columns: Collection[str], cap: int = 30) -> Table:
    """Give the named columns (ids, dates, tag names) room for their longest cell, up to ``cap`` characters,
    so that on a narrow terminal (80 columns) rich wraps the free-text columns instead of folding these."""
    for i, column in enumerate(table.columns):
        if column.header in columns:
            longest = max((len(str(row[i])) for row in rows), default=0)
            column.min_width = min(cap, max(longest, len(str(column.header))))
    return table
