"""The crawler's part of radar.toml: ``[crawl]`` (how to fetch) and ``[[sources]]`` (what to fetch).

A source is one of a tagged union keyed by its ``type`` (msgspec structs, frozen): each type declares the keys
it takes. A key another type takes but this one does not (``page_size`` left on a source switched from ``arxiv``
to ``arxiv-rss``: the single source table before the union accepted it) is ignored, and ``CrawlerConfig.notes``
says so in one line naming the source, the key and the valid keys (the composition root prints it); a key no
type takes is refused with the type's valid keys. ``crawler_config`` validates both sections once, where the
composition root reads radar.toml; errors name the key and the fix.
Adding a source type: its struct here (and in ``Source``; its URL field first in ``LOCATIONS``), its fetch function
in ``run.py``'s ``crawl_source``, and its keys in docs/configuration.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Self, cast, get_args
from urllib.parse import quote, urlparse

import msgspec

from radar.store.config import Config, TomlTable, check_keys, check_types, dataclass_from
from radar.store.errors import ConfigError

ARXIV_MAX_PAGE_SIZE = 2000
ARXIV_MAX_PER_QUERY = 30000
ARXIV_MIN_INTERVAL_S = 3.0
# what a framework source is about: its commits and releases are matched against cards of these areas
FRAMEWORK_AREAS = ("rl-post-training", "hardware-systems", "training-efficiency")
FORGES = ("github", "gitlab")


@dataclass(frozen=True)
class CrawlConfig:
    """[crawl]: how to fetch: politeness, timeouts and bounded retries."""

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


def _is_arxiv_host(url: str) -> bool:
    host = (urlparse(url).hostname or "").lower()
    return host == "arxiv.org" or host.endswith(".arxiv.org")


class SourceBase(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """The keys every source type takes; ``type`` is the union's tag."""

    LOCATIONS: ClassVar[tuple[str, ...]] = ()  # the fields holding a URL or a workspace path, the one read first

    name: str
    enabled: bool = True
    min_interval_s: float = ARXIV_MIN_INTERVAL_S

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("-", "").replace("_", "").replace(".", "").isalnum():
            raise ConfigError(f"source name {self.name!r} must be letters, digits, '-', '_' or '.'")
        where = f"source '{self.name}'"
        self._check(where)
        if self.min_interval_s < 0:
            raise ConfigError(f"{where}: min_interval_s must be >= 0")
        if _is_arxiv_host(self.target) and self.min_interval_s < ARXIV_MIN_INTERVAL_S:
            raise ConfigError(
                f"{where}: arXiv allows one request per {ARXIV_MIN_INTERVAL_S:g} s; set min_interval_s >= 3"
            )

    def _check(self, where: str) -> None:
        """The type's own checks (each error names ``where`` and the fix)."""

    @property
    def type(self) -> str:
        return cast(str, self.__struct_config__.tag)

    @property
    def target(self) -> str:
        """The URL this source reads, its first location (shown on the settings page; its secrets are scrubbed
        from errors)."""
        return cast(str, getattr(self, self.LOCATIONS[0])) if self.LOCATIONS else ""

    def with_locations(self, resolve: Callable[[str], str]) -> Self:
        """The same source with each URL field passed through ``resolve`` (the composition root turns workspace
        paths into file:// URLs)."""
        return msgspec.structs.replace(self, **{k: resolve(getattr(self, k)) for k in self.LOCATIONS})


class ArxivSource(SourceBase, frozen=True, tag="arxiv"):
    """The arXiv API, incremental by last-updated date."""

    LOCATIONS: ClassVar[tuple[str, ...]] = ("base_url",)

    base_url: str = ""
    categories: tuple[str, ...] = ()
    queries: tuple[str, ...] = ()
    page_size: int = ARXIV_MAX_PAGE_SIZE
    max_results: int = ARXIV_MAX_PER_QUERY
    initial_days: int = 7

    def _check(self, where: str) -> None:
        if not self.base_url:
            raise ConfigError(f"{where}: set base_url (e.g. https://export.arxiv.org/api/query)")
        if not (self.categories or self.queries):
            raise ConfigError(f'{where}: give categories = ["cs.LG"] or queries = ["all:GRPO"]')
        if not 1 <= self.page_size <= ARXIV_MAX_PAGE_SIZE:
            raise ConfigError(f"{where}: page_size must be 1..{ARXIV_MAX_PAGE_SIZE} (the API maximum)")
        if not 1 <= self.max_results <= ARXIV_MAX_PER_QUERY:
            raise ConfigError(f"{where}: max_results must be 1..{ARXIV_MAX_PER_QUERY} (the API maximum)")
        if self.initial_days < 0:
            raise ConfigError(f"{where}: initial_days must be >= 0")


class ArxivRssSource(SourceBase, frozen=True, tag="arxiv-rss"):
    """The daily arXiv announcement listing of some categories."""

    LOCATIONS: ClassVar[tuple[str, ...]] = ("base_url",)

    base_url: str = ""
    categories: tuple[str, ...] = ()

    def _check(self, where: str) -> None:
        if not self.base_url:
            raise ConfigError(f"{where}: set base_url (e.g. https://rss.arxiv.org/atom/)")
        if not self.categories:
            raise ConfigError(f'{where}: give categories = ["cs.LG", "cs.AI"]')

    @property
    def feed_url(self) -> str:
        return self.base_url.rstrip("/") + "/" + "+".join(self.categories)


class FeedSource(SourceBase, frozen=True, tag="feed"):
    """Any RSS/Atom/RDF feed (conditional GET)."""

    LOCATIONS: ClassVar[tuple[str, ...]] = ("url",)

    url: str = ""

    def _check(self, where: str) -> None:
        if not self.url:
            raise ConfigError(f'{where}: a feed needs url = "https://.../feed.xml"')

    @property
    def feed_url(self) -> str:
        return self.url


class FrameworkSource(SourceBase, frozen=True, tag="framework"):
    """A code repository's public Atom feeds: its releases and its branch's commits."""

    LOCATIONS: ClassVar[tuple[str, ...]] = ("url",)

    url: str = ""
    branch: str = "main"
    forge: str = ""  # github | gitlab ('' = gitlab when the url's host says so, else github)
    area: str = ""  # one of FRAMEWORK_AREAS
    label: str = ""  # the framework's name as cards show it ('' = the source's name)

    def _check(self, where: str) -> None:
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
    def framework(self) -> str:
        """The framework's name as cards and reports show it."""
        return self.label or self.name

    def framework_feeds(self) -> tuple[tuple[str, str], ...]:
        """(kind, Atom feed URL): its releases and its branch's commits, as its forge publishes them."""
        repo = self.url.rstrip("/").removesuffix(".git")
        forge = self.forge or ("gitlab" if "gitlab" in (urlparse(repo).hostname or "") else "github")
        branch = quote(self.branch, safe="/")
        if forge == "gitlab":
            return (("release", f"{repo}/-/tags?format=atom"), ("commit", f"{repo}/-/commits/{branch}?format=atom"))
        return (("release", f"{repo}/releases.atom"), ("commit", f"{repo}/commits/{branch}.atom"))


Source = ArxivSource | ArxivRssSource | FeedSource | FrameworkSource
SOURCE_TYPES: dict[str, type[SourceBase]] = {cast(str, cls.__struct_config__.tag): cls for cls in get_args(Source)}


SOURCE_KEYS = frozenset({"type", *(f.name for cls in SOURCE_TYPES.values() for f in msgspec.structs.fields(cls))})


def source_from(table: TomlTable, where: str) -> tuple[Source, str]:
    """One [[sources]] table as its type's struct, and a note ('' when none) naming the keys of other source types
    it ignored; the first problem as one line naming ``where`` and the fix."""
    kind = table.get("type")
    name = table.get("name", "")
    if kind is None:
        missing = [k for k in ("name", "type") if k not in table]
        raise ConfigError(f"{where}: missing {', '.join(missing)}; add {missing[0]} = ... to this table")
    if not isinstance(kind, str):
        raise ConfigError(f"{where}: type must be a string, not {kind!r}; fix it in radar.toml")
    cls = SOURCE_TYPES.get(kind)
    if cls is None:
        raise ConfigError(f"source {name!r}: type {kind!r} is not one of {', '.join(SOURCE_TYPES)}")
    fields = msgspec.structs.fields(cls)
    valid = {"type", *(f.name for f in fields)}
    check_keys(table, valid | SOURCE_KEYS, f"{where} (type {kind})", valid=valid)
    ignored = sorted(set(table) - valid)
    note = (
        f"{where} (type {kind}): ignoring {', '.join(ignored)} (another source type's key(s)); "
        f"valid keys: {', '.join(sorted(valid))}; remove {'them' if len(ignored) > 1 else 'it'} from radar.toml"
        if ignored
        else ""
    )
    table = {k: v for k, v in table.items() if k in valid}
    check_types(cls, {k: v for k, v in table.items() if k != "type"}, where)
    missing = [f.name for f in fields if f.required and f.name not in table]
    if missing:
        raise ConfigError(f"{where}: missing {', '.join(missing)}; add {missing[0]} = ... to this table")
    try:
        return msgspec.convert(table, type=Source), note
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{where}: {exc}; fix it in radar.toml") from None


@dataclass(frozen=True)
class CrawlerConfig:
    """The crawler's config: [crawl] and the [[sources]], validated."""

    crawl: CrawlConfig = CrawlConfig()
    sources: tuple[Source, ...] = ()
    notes: tuple[str, ...] = ()  # keys of another source type a source ignored, a line each (for stderr)

    def source(self, name: str) -> Source:
        for src in self.sources:
            if src.name == name:
                return src
        valid = ", ".join(s.name for s in self.sources) or "(none configured)"
        raise ConfigError(f"unknown source {name!r}; configured sources: {valid}")

    def with_locations(self, resolve: Callable[[str], str]) -> CrawlerConfig:
        return CrawlerConfig(self.crawl, tuple(src.with_locations(resolve) for src in self.sources), self.notes)


def crawler_config(config: Config) -> CrawlerConfig:
    """[crawl] and [[sources]] of a parsed radar.toml, validated."""
    origin = config.origin
    crawl = dataclass_from(CrawlConfig, config.section("crawl"), f"{origin} [crawl]")
    sources, notes = [], []
    for i, table in enumerate(config.source_tables):
        name = table.get("name", f"#{i + 1}")
        name = name if isinstance(name, str) else f"#{i + 1}"
        source, note = source_from(table, f"{origin} [[sources]] {name!r}")
        sources.append(source)
        notes += [note] if note else []
    names = [s.name for s in sources]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ConfigError(f"{origin}: source names must be unique; rename {', '.join(dupes)}")
    return CrawlerConfig(crawl, tuple(sources), tuple(notes))
