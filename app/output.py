"""Printing for commands: JSON documents on stdout, human text through rich on stderr/stdout."""

from __future__ import annotations

import re
import sys
from collections.abc import Collection, Sequence
from typing import Any

import orjson
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

# C0/C1 controls (escape sequences, carriage returns, line feeds), bidi controls, zero-width characters and the
# line/paragraph separators: text from a feed, a file or the database must not drive the terminal, forge a line
# or reorder what follows it
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2028\u2029\u2060-\u2069\ufeff]")
TITLE_CHARS = 200  # a printed title is clipped to this many characters


def safe(text: str) -> str:
    """Text for one terminal line: each control character shown as its escape (``\\x1b``, ``\\n``), never sent."""
    return _UNSAFE.sub(lambda m: ascii(m.group())[1:-1], text)


def title_line(text: str, limit: int = TITLE_CHARS) -> str:
    """A title (or any one-line value from outside) as printed: clipped to ``limit`` characters (before its
    control characters are shown escaped, so a 2 MB title costs 200 characters), then ``safe``."""
    clipped = text if len(text) <= limit else text[: limit - 1] + "…"
    return safe(clipped)


console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def progress_bar(label: str, count: str, *, disable: bool, transient: bool = False) -> Progress:
    """A command's progress on stderr: ``label`` (a rich format of the task: "importing {task.description}"), the
    bar, ``count`` ("{task.completed:,} papers") and the time elapsed; ``disable`` with --json or no terminal."""
    columns = (TextColumn(label), BarColumn(), TextColumn(count), TimeElapsedColumn())
    return Progress(*columns, console=err_console, transient=transient, disable=disable)


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
