"""radar.toml read as TOML: each stage's section kept as a parsed table, for the stage's own config dataclass to
validate (the helpers below check keys and value types; errors say which key is wrong and how to fix it).
"""

from __future__ import annotations

import math
import tomllib
import types
import typing
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

from radar.store.errors import ConfigError

# Sections owned by the stages; each stage validates its own table with its own dataclass ([crawl] and the
# [[sources]] tables: the crawler's crawler.config).
STAGE_SECTIONS = (
    "crawl",
    "embedding",
    "search",
    "tagging",
    "trends",
    "report",
    "delivery",
    "profile",
    "repro",
    "app",
    "dashboard",
)
DEFAULT_CONFIG_TEXT = (Path(__file__).with_name("default_config.toml")).read_text(encoding="utf-8")
# A value of a parsed TOML table (what tomllib returns), and a table: the stage sections, before each stage's
# dataclass validates its own.
TomlValue = str | int | float | bool | datetime | date | time | list["TomlValue"] | dict[str, "TomlValue"]
TomlTable = dict[str, TomlValue]


def check_keys(
    table: Mapping[str, TomlValue], allowed: set[str], where: str, valid: set[str] | frozenset[str] | None = None
) -> None:
    """Unknown keys in a config table: one error naming them and the valid ones (``valid``, default ``allowed``:
    the keys to suggest where more are tolerated)."""
    unknown = sorted(set(table) - allowed)
    if unknown:
        hint = ", ".join(sorted(allowed if valid is None else valid))
        raise ConfigError(f"unknown key(s) {', '.join(unknown)} in {where}; valid keys: {hint}")


@dataclass(frozen=True)
class Config:
    """radar.toml parsed: each stage's table, and the [[sources]] tables, for the stages' dataclasses to
    validate (``origin`` names the file in their errors)."""

    sections: dict[str, TomlTable] = field(default_factory=dict)
    source_tables: tuple[TomlTable, ...] = ()
    origin: str = "radar.toml"

    def section(self, name: str) -> TomlTable:
        """A stage's raw table, for that stage's own config dataclass to validate."""
        return dict(self.sections.get(name, {}))


def _describe(hint: Any) -> str:
    """'a whole number', 'true or false', 'a list of strings', ... for an error line."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in args)
    if origin is tuple:
        return f"a list of {_describe(args[0]).removeprefix('a ').removeprefix('an ')}s"
    if origin is dict:
        return f"a table of {_describe(args[1]).removeprefix('a ')}s"
    names = {bool: "true or false", int: "a whole number", float: "a number", str: "a string"}
    return names.get(hint, getattr(hint, "__name__", str(hint)))


def _fits(value: Any, hint: Any) -> bool:
    """Whether a parsed TOML value has the field's declared type (int counts as float; NaN does not)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any or (isinstance(hint, type) and is_dataclass(hint)):
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, a) for a in args)
    if origin is tuple:
        item = args[0] if args else Any
        return isinstance(value, list | tuple) and all(_fits(v, item) for v in value)
    if origin is dict:
        return isinstance(value, Mapping) and all(_fits(v, args[1]) for v in value.values())
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if hint is str:
        return isinstance(value, str)
    return True  # a type this checker does not know: the dataclass's own __post_init__ decides


def check_types(cls: type, table: Mapping[str, TomlValue], where: str) -> None:
    """One error line for the first value whose type does not match ``cls``'s field (NaN is no number)."""
    hints = typing.get_type_hints(cls)
    for key, value in table.items():
        hint = hints.get(key)
        if hint is not None and not _fits(value, hint):
            shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
            raise ConfigError(f"{where}: {key} must be {_describe(hint)}, not {shown}; fix it in radar.toml")


def dataclass_from(cls: type, table: Mapping[str, TomlValue], where: str) -> Any:
    """A stage's config dataclass from its radar.toml table (lists become tuples); errors name ``where``.
    Keys and value types are checked here; ranges are checked by the dataclass's own ``__post_init__``."""
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where} must be a table of key = value lines")
    allowed = {f.name for f in fields(cls)}
    check_keys(table, allowed, where)
    check_types(cls, table, where)
    required = [f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING and f.init]
    missing = [name for name in required if name not in table]
    if missing:
        raise ConfigError(f"{where}: missing {', '.join(missing)}; add {missing[0]} = ... to this table")
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in table.items()}
    try:
        return cls(**kwargs)
    except (TypeError, ValueError, OverflowError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{where}: {exc}") from None


def parse_config(text: str, origin: str = "radar.toml") -> Config:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{origin} is not valid TOML ({exc}); fix that line or re-create it with `radar init`"
        ) from None
    crawl_table = data.get("crawl", {})
    source_tables = data.pop("sources", [])
    if not isinstance(crawl_table, dict):
        raise ConfigError(f"{origin}: [crawl] must be a table")
    if not isinstance(source_tables, list) or not all(isinstance(t, dict) for t in source_tables):
        raise ConfigError(f"{origin}: sources must be written as [[sources]] tables")
    sections = {k: v for k, v in data.items() if isinstance(v, dict)}
    unknown = sorted(set(sections) - set(STAGE_SECTIONS))
    if unknown:
        raise ConfigError(
            f"{origin}: unknown section(s) [{'], ['.join(unknown)}]; valid: [crawl], [[sources]], "
            + ", ".join(f"[{s}]" for s in STAGE_SECTIONS if s != "crawl")
        )
    loose = sorted(k for k, v in data.items() if not isinstance(v, dict))
    if loose:
        raise ConfigError(f"{origin}: top-level key(s) {', '.join(loose)} belong inside a [section]")
    return Config(sections=sections, source_tables=tuple(source_tables), origin=origin)
