"""Data access for the dashboard pages.

One Store connection and one Searcher per workspace live for the life of the server
(``st.cache_resource``). Aggregates are cached (``st.cache_data``) under the store's *version*: a
fingerprint of documents, tags and embeddings, recomputed only when ``PRAGMA data_version`` says another
connection committed. A rerun therefore costs a pragma and cache lookups, never a table scan;
repro heartbeats (runs table) change data_version but not the version, so they keep the caches.

Writes (tag corrections, runs) go through their own short-lived connections, never the shared one.
``RADAR_DASHBOARD_NO_CACHE=1`` turns every cache off: the benchmark's baseline.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec
import pandas as pd
import streamlit as st

from radar.analysis.trends.result import NewMethod
from radar.app.context import Radar
from radar.crawler.documents import Documents
from radar.index.embeddings import Embeddings
from radar.index.tags_table import Tags
from radar.reports.text import code_spans, plain
from radar.store import Store, Workspace, resolve_root
from radar.store.errors import RadarError
from radar.store.text import strip_invisible

if TYPE_CHECKING:  # the searcher loads faiss and the embedder: imported where it is opened
    from radar.index.search import Filters, Hit, Searcher

NO_CACHE_ENV = "RADAR_DASHBOARD_NO_CACHE"
F = TypeVar("F", bound=Callable[..., Any])


def caching() -> bool:
    return os.environ.get(NO_CACHE_ENV, "") not in ("1", "true", "yes")


def _switchable(func: F, cached: Any) -> F:
    """Call ``cached`` unless caching is off (the benchmark's baseline), checked at call time."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return (cached if caching() else func)(*args, **kwargs)

    call.__doc__, call.__name__ = func.__doc__, func.__name__
    call.clear = cached.clear  # type: ignore[attr-defined]
    return call  # type: ignore[return-value]


def cache_data(func: F) -> F:
    return _switchable(func, st.cache_data(show_spinner=False, max_entries=64)(func))


def cache_resource(func: F) -> F:
    return _switchable(func, st.cache_resource(show_spinner=False, max_entries=4)(func))


# -- workspace --------------------------------------------------------------------------------------
def workspace_root() -> str:
    """``streamlit run main.py -- --workspace DIR`` (what `radar app` passes), else $RADAR_HOME."""
    argv = sys.argv[1:]
    for i, arg in enumerate(argv):
        if arg == "--workspace" and i + 1 < len(argv):
            return str(Path(argv[i + 1]).expanduser().resolve())
        if arg.startswith("--workspace="):
            return str(Path(arg.split("=", 1)[1]).expanduser().resolve())
    return str(resolve_root(None))


def workspace() -> Workspace:
    return Workspace.open(Path(workspace_root()))


def radar(root: str) -> Radar:
    """The workspace at ``root`` with its settings (radar.toml read on first use)."""
    return Radar(Workspace(Path(root)))


@dataclass
class Shared:
    """What every session of one workspace shares: a read connection and the version it last saw."""

    store: Store
    lock: threading.Lock = field(default_factory=threading.Lock)
    data_version: int = -1
    version: str = ""


@cache_resource
def shared(root: str) -> Shared:
    return Shared(Workspace(Path(root)).store())


def version(root: str) -> str:
    """Fingerprint of documents, tags and embeddings; recomputed only after another connection committed."""
    sh = shared(root)
    with sh.lock:
        seen = sh.store.data_version()
        if seen != sh.data_version or not sh.version:
            db = sh.store
            sh.version = f"{Documents(db).fingerprint()}|{Tags(db).fingerprint()}|{Embeddings(db).generation()}"
            sh.data_version = seen
        return sh.version


def read(root: str, fn: Callable[[Store], Any]) -> Any:
    """Run ``fn`` on the shared connection (one session at a time)."""
    sh = shared(root)
    with sh.lock:
        return fn(sh.store)


# -- cached aggregates (keyed by root and version) --------------------------------------------------
@dataclass(frozen=True, slots=True)
class Facets:
    """Filter choices and headline totals."""

    first: str  # stamps of the first and last day documents entered the record ('' when none)
    last: str
    last_paper: str
    sources: dict[str, int]  # documents per source
    tags: list[str]
    categories: dict[str, int]  # documents per primary category, most first
    counts: dict[str, int]  # rows per table


@cache_data
def facets(root: str, ver: str) -> Facets:
    """Filter choices and headline totals."""

    def go(s: Store) -> Facets:
        span = Documents(s).published_range()
        return Facets(
            first=span.first,
            last=span.last,
            last_paper=Documents(s).published_range("paper").last,
            sources=Documents(s).stats().by_source,
            tags=Tags(s).known(),
            categories=Documents(s).primary_categories(),
            counts=s.table_counts(),
        )

    result: Facets = read(root, go)
    return result


class TaxonomyRow(msgspec.Struct, frozen=True):
    """A tag of the taxonomy as the settings page lists it."""

    tag: str
    group: str
    description: str
    keywords: str  # comma-separated


@cache_data
def taxonomy(root: str, config_mtime: float) -> list[TaxonomyRow]:
    """The tagger's taxonomy as rows (cached until radar.toml changes)."""
    tax = radar(root).taxonomy
    return [TaxonomyRow(t.name, t.group, t.description, ", ".join(t.keywords)) for t in tax.tags]


def table(rows: Sequence[msgspec.Struct]) -> pd.DataFrame:
    """A page's rows (records whose fields, or their ``rename``d JSON names, are the columns) as a dataframe: the
    one place a page's records become a table."""
    return pd.DataFrame(msgspec.to_builtins(rows))


# -- search -----------------------------------------------------------------------------------------
@dataclass
class SearchHandle:
    searcher: Searcher
    lock: threading.Lock = field(default_factory=threading.Lock)


@cache_resource
def searcher(root: str, generation: int, docs: str) -> SearchHandle:
    """The hybrid searcher (FAISS + BM25 + the embedder), loaded once per index state."""
    from radar.app.wiring_search import open_searcher  # defers faiss, onnxruntime

    return SearchHandle(open_searcher(radar(root)))


def search_handle(root: str) -> SearchHandle:
    """Raises index.errors.IndexError_ (with the fix) when nothing is indexed yet."""
    docs, _, generation = version(root).split("|")
    return searcher(root, int(generation), docs)


@cache_data
def search(root: str, ver: str, query: str, filters: Filters, k: int) -> list[Hit]:
    """Hybrid search hits for a query and filters."""
    handle = search_handle(root)
    with handle.lock:
        return handle.searcher.search(query, k=k, filters=filters)


@cache_data
def similar(root: str, ver: str, doc_id: str, k: int) -> list[Hit]:
    handle = search_handle(root)
    with handle.lock:
        return handle.searcher.similar(doc_id, k=k)


@cache_data
def latest(root: str, ver: str, filters: Filters, k: int) -> tuple[list[Any], dict[str, list[str]]]:
    """The newest ``k`` documents matching ``filters`` and their tags."""
    since, until = filters.sql_bounds()

    def go(s: Store) -> tuple[list[Any], dict[str, list[str]]]:
        docs = Documents(s).latest(
            since=since,
            until=until,
            tags=filters.tags,
            sources=filters.sources,
            categories=filters.categories,
            kinds=filters.kinds,
            limit=k,
        )
        return docs, Tags(s).of([d.id for d in docs])

    return read(root, go)


# -- text from feeds is untrusted --------------------------------------------------------------------
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$&:=\"'@%^])")


def md(text: str) -> str:
    """Plain text safe inside st.markdown: every Markdown/HTML special character backslash-escaped,
    so no link, image, HTML tag, LaTeX or heading can come out of feed content."""
    return _MD_SPECIAL.sub(r"\\\1", strip_invisible(text or ""))  # and no bidi / zero-width character


def text(value: str) -> str:
    """A title or abstract for st.markdown: through the report's LaTeX-to-text step, then escaped (``md``)."""

    return md(plain(value or ""))


def ours(value: str) -> str:
    """Our own text (a recommendation's reason, a note) for st.markdown: every part escaped as ``md`` escapes feed
    text, its `backticked` spans shown as code (a code span is never read as markup)."""

    return "".join(f"`{part}`" if code else md(part) for part, code in code_spans(value or ""))


def link(label: str, url: str) -> str:
    """A Markdown link for st.markdown: ``label`` already escaped (``md``/``text``), ``url`` only when it is
    http(s), with the characters that would end or break the link target percent-encoded; else the label alone."""
    if not url.startswith(("http://", "https://")):
        return label
    safe = "".join(f"%{ord(c):02X}" if c in " ()<>[]\"'\\`" or ord(c) < 33 else c for c in url)
    return f"[{label}]({safe})"


def one_line(text: str, limit: int = 300) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def page_root() -> str:
    """The workspace root for a page; on a bad workspace, one error line naming the fix, and stop."""
    try:
        return str(workspace().root)
    except RadarError as exc:
        st.error(md(f"radar: {exc}"))
        st.stop()
        raise  # unreachable: st.stop() raises


METHOD_KINDS = (None, "method", "system", "hardware")  # a name the classifier does not know stays


class MethodRow(msgspec.Struct, frozen=True, rename={"this_period": "this period"}):
    """A new method as a person reads it: named columns, the introducing paper, growth as "4.6x"."""

    method: str
    kind: str
    introduced: str
    paper: str
    papers: int
    this_period: int
    growth: str


def method_rows(methods: Sequence[NewMethod]) -> pd.DataFrame:
    """New methods (the trends' ``new_methods``: what a paper of the last months introduces) as a table a person
    reads: named columns, the introducing paper, growth as "4.6x", the kind beside the name."""
    return table(
        [
            MethodRow(
                method=m.name,
                kind=m.kind or "unknown",
                introduced=str(m.first_seen or "")[:10],
                paper=m.first_id or "",
                papers=m.count,
                this_period=m.recent_count,
                growth=f"{float(m.growth or 0):.1f}x",
            )
            for m in methods
        ]
    )
