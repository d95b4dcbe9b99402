"""radar.toml: one small, validated dataclass per stage.

Errors say which key is wrong and how to fix it. Sections that later stages own
(embedding, taxonomy, delivery, ...) are kept as parsed tables for those stages to
validate with their own dataclasses.
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
from urllib.parse import quote, urlparse

from radar.store.errors import ConfigError

SOURCE_TYPES = ("arxiv", "arxiv-rss", "feed", "framework")
# what a framework source is about: its commits and releases are matched against cards of these areas
FRAMEWORK_AREAS = ("rl-post-training", "hardware-systems", "training-efficiency")
FORGES = ("github", "gitlab")
# Sections owned by later stages; each stage validates its own table with its own dataclass.
STAGE_SECTIONS = (
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
ARXIV_MAX_PAGE_SIZE = 2000
ARXIV_MAX_PER_QUERY = 30000
ARXIV_MIN_INTERVAL_S = 3.0
DEFAULT_CONFIG_TEXT = (Path(__file__).with_name("default_config.toml")).read_text(encoding="utf-8")
# A value of a parsed TOML table (what tomllib returns), and a table: the stage sections, before each stage's
# dataclass validates its own.
TomlValue = str | int | float | bool | datetime | date | time | list["TomlValue"] | dict[str, "TomlValue"]
TomlTable = dict[str, TomlValue]


def check_keys(table: Mapping[str, TomlValue], allowed: set[str], where: str) -> None:
    """Unknown keys in a config table: one error naming them and the valid ones."""
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ConfigError(f"unknown key(s) {', '.join(unknown)} in {where}; valid keys: {', '.join(sorted(allowed))}")


def _is_arxiv_host(url: str) -> bool:
    host = (urlparse(url).hostname or "").lower()
    return host == "arxiv.org" or host.endswith(".arxiv.org")


@dataclass(frozen=True)
class CrawlConfig:
    """How to fetch: politeness, timeouts and bounded retries."""

    user_agent: str = "research-radar/0.1 (mailto:you@example.org)"
    timeout_s: float = 30.0
    max_retries: int = 4
    backoff_base_s: float = 3.0
    max_backoff_s: float = 120.0
    max_response_mb: float = 50.0  # per response, on the wire and after decompression (a gzip bomb stops here)
    max_feed_entries: int = 2000  # per feed per crawl: the newest are stored, the rest left (a line says so)

    def __post_init__(self) -> None:
        if not self.timeout_s > 0:
            raise ConfigError("[crawl] timeout_s must be > 0 seconds")
        if not 0.001 <= self.max_response_mb <= 10_000:
            raise ConfigError("[crawl] max_response_mb must be between 0.001 and 10000 (megabytes per response)")
        if not 1 <= self.max_feed_entries <= 1_000_000:
            raise ConfigError("[crawl] max_feed_entries must be 1..1000000 (entries stored per feed per crawl)")
        if not 0 <= self.max_retries <= 10:
            raise ConfigError("[crawl] max_retries must be between 0 and 10 (retries are bounded)")
        if self.backoff_base_s < 0 or self.max_backoff_s < self.backoff_base_s:
            raise ConfigError("[crawl] need 0 <= backoff_base_s <= max_backoff_s")


@dataclass(frozen=True)
class SourceConfig:
    """What to fetch from one source."""

    name: str
    type: str
    url: str = ""
    base_url: str = ""
    categories: tuple[str, ...] = ()
    queries: tuple[str, ...] = ()
    page_size: int = ARXIV_MAX_PAGE_SIZE
    min_interval_s: float = ARXIV_MIN_INTERVAL_S
    max_results: int = ARXIV_MAX_PER_QUERY
    initial_days: int = 7
    enabled: bool = True
    # type = "framework": a code repository's public Atom feeds (releases and the branch's commits)
    branch: str = "main"
    forge: str = ""  # github | gitlab ('' = gitlab when the url's host says so, else github)
    area: str = ""  # one of FRAMEWORK_AREAS
    label: str = ""  # the framework's name as cards show it ('' = the source's name)

    def __post_init__(self) -> None:
        where = f"source '{self.name}'"
        if not self.name or not self.name.replace("-", "").replace("_", "").replace(".", "").isalnum():
            raise ConfigError(f"source name {self.name!r} must be letters, digits, '-', '_' or '.'")
        if self.type not in SOURCE_TYPES:
            raise ConfigError(f"{where}: type {self.type!r} is not one of {', '.join(SOURCE_TYPES)}")
        if self.type == "feed" and not self.url:
            raise ConfigError(f'{where}: a feed needs url = "https://.../feed.xml"')
        if self.type == "framework":
            self._check_framework(where)
        if self.type in ("arxiv", "arxiv-rss") and not self.base_url:
            raise ConfigError(f"{where}: set base_url (e.g. https://export.arxiv.org/api/query)")
        if self.type == "arxiv" and not (self.categories or self.queries):
            raise ConfigError(f'{where}: give categories = ["cs.LG"] or queries = ["all:GRPO"]')
        if self.type == "arxiv-rss" and not self.categories:
            raise ConfigError(f'{where}: give categories = ["cs.LG", "cs.AI"]')
        if not 1 <= self.page_size <= ARXIV_MAX_PAGE_SIZE:
            raise ConfigError(f"{where}: page_size must be 1..{ARXIV_MAX_PAGE_SIZE} (the API maximum)")
        if not 1 <= self.max_results <= ARXIV_MAX_PER_QUERY:
            raise ConfigError(f"{where}: max_results must be 1..{ARXIV_MAX_PER_QUERY} (the API maximum)")
        if self.min_interval_s < 0:
            raise ConfigError(f"{where}: min_interval_s must be >= 0")
        target = self.base_url or self.url
        if _is_arxiv_host(target) and self.min_interval_s < ARXIV_MIN_INTERVAL_S:
            raise ConfigError(
                f"{where}: arXiv allows one request per {ARXIV_MIN_INTERVAL_S:g} s; set min_interval_s >= 3"
            )
        if self.initial_days < 0:
            raise ConfigError(f"{where}: initial_days must be >= 0")

    def _check_framework(self, where: str) -> None:
        parts = urlparse(self.url)
        if parts.scheme not in ("http", "https", "file") or not parts.path.strip("/"):
            raise ConfigError(f'{where}: a framework needs url = "https://github.com/OWNER/REPO" (the repository)')
        if self.area not in FRAMEWORK_AREAS:
            raise ConfigError(f"{where}: area must be one of {', '.join(FRAMEWORK_AREAS)} (what the framework is for)")
        if self.forge not in ("", *FORGES):
            raise ConfigError(f"{where}: forge must be github or gitlab (or left out: told by the url's host)")
        if not self.branch or any(c in self.branch for c in "?#\\ ") or ".." in self.branch:
            raise ConfigError(f'{where}: branch must be a branch name such as "main"')

    @property
    def target(self) -> str:
        return self.url or self.base_url

    @property
    def framework(self) -> str:
        """The framework's name as cards and reports show it."""
        return self.label or self.name

    def framework_feeds(self) -> tuple[tuple[str, str], ...]:
        """(kind, Atom feed URL) of a framework source: its releases and its branch's commits, as its forge
        publishes them."""
        repo = self.url.rstrip("/").removesuffix(".git")
        forge = self.forge or ("gitlab" if "gitlab" in (urlparse(repo).hostname or "") else "github")
        branch = quote(self.branch, safe="/")
        if forge == "gitlab":
            return (("release", f"{repo}/-/tags?format=atom"), ("commit", f"{repo}/-/commits/{branch}?format=atom"))
        return (("release", f"{repo}/releases.atom"), ("commit", f"{repo}/commits/{branch}.atom"))


@dataclass(frozen=True)
class Config:
    crawl: CrawlConfig = field(default_factory=CrawlConfig)
    sources: tuple[SourceConfig, ...] = ()
    sections: dict[str, TomlTable] = field(default_factory=dict)

    def source(self, name: str) -> SourceConfig:
        for src in self.sources:
            if src.name == name:
                return src
        valid = ", ".join(s.name for s in self.sources) or "(none configured)"
        raise ConfigError(f"unknown source {name!r}; configured sources: {valid}")

    def section(self, name: str) -> TomlTable:
        """A later stage's raw table, for that stage's own config dataclass to validate."""
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
    crawl_table = data.pop("crawl", {})
    source_tables = data.pop("sources", [])
    if not isinstance(crawl_table, dict):
        raise ConfigError(f"{origin}: [crawl] must be a table")
    if not isinstance(source_tables, list) or not all(isinstance(t, dict) for t in source_tables):
        raise ConfigError(f"{origin}: sources must be written as [[sources]] tables")
    crawl = dataclass_from(CrawlConfig, crawl_table, f"{origin} [crawl]")
    sources = []
    for i, table in enumerate(source_tables):
        name = table.get("name", f"#{i + 1}")
        name = name if isinstance(name, str) else f"#{i + 1}"
        sources.append(dataclass_from(SourceConfig, table, f"{origin} [[sources]] {name!r}"))
    names = [s.name for s in sources]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"{origin}: source names must be unique; rename {', '.join(dupes)}")
    sections = {k: v for k, v in data.items() if isinstance(v, dict)}
    unknown = sorted(set(sections) - set(STAGE_SECTIONS))
    if unknown:
        raise ConfigError(
            f"{origin}: unknown section(s) [{'], ['.join(unknown)}]; valid: [crawl], [[sources]], "
            + ", ".join(f"[{s}]" for s in STAGE_SECTIONS)
        )
    loose = sorted(k for k, v in data.items() if not isinstance(v, dict))
    if loose:
        raise ConfigError(f"{origin}: top-level key(s) {', '.join(loose)} belong inside a [section]")
    return Config(crawl=crawl, sources=tuple(sources), sections=sections)
