"""Settings: the configured sources with their last crawl status and errors, the taxonomy, and the
workspace (paths and row counts). Read-only: edit radar.toml and rerun the commands."""

from __future__ import annotations

from pathlib import Path

import msgspec
import streamlit as st

from radar.app.dashboard import data, period
from radar.crawler.state import CrawlStates
from radar.store import Workspace
from radar.store.errors import RadarError
from radar.store.scrub import scrub


def render() -> None:
    root = data.page_root()
    ws = Workspace(Path(root))
    st.title("Settings")
    period.picker(root, data.version(root))  # the sidebar's week stays as the other pages left it
    _sources(root, ws)
    _taxonomy(root, ws)
    _workspace(root, ws)


class SourceRow(msgspec.Struct, frozen=True, rename=lambda name: name.replace("_", " ")):
    """A configured source and its last crawl, as the sources table shows it."""

    source: str
    type: str
    url: str  # scrubbed: a feed url's user:password@ and ?token= stay out of the page
    enabled: bool
    status: str  # never crawled | failed | ok
    last_success: str
    last_attempt: str
    last_result: str
    last_error: str
    error_at: str


class PathRow(msgspec.Struct, frozen=True):
    what: str
    path: str
    exists: bool


def _sources(root: str, ws: Workspace) -> None:
    st.subheader("Sources")
    try:
        config = data.radar(root).settings.crawler
    except RadarError as exc:
        st.error(data.md(f"radar: {exc}"))
        return
    if not config.sources:
        st.info(f"No sources in {data.md(str(ws.config_path))}; add [[sources]] tables and run `radar crawl`.")
        return
    states = data.read(root, lambda s: {src.name: CrawlStates(s).get(src.name) for src in config.sources})
    rows = []
    for src in config.sources:
        state = states[src.name]
        status = (
            "never crawled"
            if not state.last_attempt
            else ("failed" if state.last_error and state.last_error_at >= state.last_success else "ok")
        )
        last = (state.last_success, state.last_attempt, state.last_summary, state.last_error, state.last_error_at)
        rows.append(SourceRow(src.name, src.type, scrub(src.target), src.enabled, status, *last))
    st.dataframe(data.table(rows), hide_index=True)
    failing = [r for r in rows if r.status == "failed"]
    if failing:
        st.warning(
            f"{len(failing)} source(s) failed on their last crawl: "
            + data.md(", ".join(r.source for r in failing))
            + "; see `last error`"
        )
    st.caption(f"edit {data.md(str(ws.config_path))} to add or change sources, then run `radar crawl`")


def _taxonomy(root: str, ws: Workspace) -> None:
    st.subheader("Taxonomy")
    config = ws.config_path
    try:
        tax = data.taxonomy(root, config.stat().st_mtime if config.exists() else 0.0)
    except RadarError as exc:
        st.error(data.md(f"radar: {exc}"))
        return
    st.dataframe(data.table(tax), hide_index=True)


def _workspace(root: str, ws: Workspace) -> None:
    st.subheader("Workspace")
    counts = data.read(root, lambda s: s.table_counts())
    reports = sum(1 for p in ws.reports_dir.glob("*") if p.is_dir()) if ws.reports_dir.is_dir() else 0
    cols = st.columns(len(counts) + 1)
    for col, (table, n) in zip(cols, counts.items(), strict=False):
        col.metric(table.replace("_", " "), f"{n:,}")
    cols[-1].metric("reports", f"{reports:,}")
    paths = {
        "workspace": ws.root,
        "config": ws.config_path,
        "database": ws.db_path,
        "indexes": ws.index_dir,
        "reports": ws.reports_dir,
        "runs": ws.runs_dir,
    }
    size = ws.db_path.stat().st_size if ws.db_path.exists() else 0
    st.dataframe(data.table([PathRow(k, str(v), v.exists()) for k, v in paths.items()]), hide_index=True)
    st.caption(f"database {size / 1e6:,.1f} MB (WAL mode)")


if __name__ == "__main__":
    render()
