"""Reports: the weekly reports under WORKSPACE/reports/YYYY-Www, one shown rendered, downloads, and
"generate now" for a chosen week through the report library.

A report's HTML holds feed text; it is shown inside an iframe whose ``sandbox`` allows neither
scripts nor same-origin access (only popups, for its links), nested in the frame of ``st.iframe``.
"""

from __future__ import annotations

import html
import re
from datetime import date, timedelta
from pathlib import Path

import streamlit as st

from radar.app.context import Radar
from radar.app.dashboard import data, period, reproduce
from radar.reports.build import BuiltReportJson
from radar.reports.period import Period, parse_week, week_of
from radar.store import Workspace
from radar.store.errors import RadarError

WEEK = re.compile(r"^\d{4}-W\d{2}$")
MIME = {".md": "text/markdown", ".html": "text/html", ".pdf": "application/pdf", ".json": "application/json"}


def list_reports(ws: Workspace) -> list[Path]:
    """Report folders, newest week first."""
    if not ws.reports_dir.is_dir():
        return []
    return sorted((p for p in ws.reports_dir.iterdir() if p.is_dir() and WEEK.match(p.name)), reverse=True)


def report_files(folder: Path) -> dict[str, Path]:
    """{suffix: file} for the report's md/html/pdf/json files (the first of each kind)."""
    out: dict[str, Path] = {}
    for path in sorted(folder.iterdir()):
        if path.is_file() and path.suffix in MIME and not path.name.startswith("."):
            out.setdefault(path.suffix, path)
    return out


def sandboxed(report_html: str) -> str:
    """The report inside a sandboxed iframe: it renders, no script in it runs, it cannot reach the app;
    its links open in a new tab (popups may leave the sandbox: they are ordinary pages)."""
    head = re.search(r"<head[^>]*>", report_html, flags=re.IGNORECASE)
    base = '<base target="_blank">'
    doc = report_html[: head.end()] + base + report_html[head.end() :] if head else base + report_html
    return (
        '<iframe sandbox="allow-popups allow-popups-to-escape-sandbox" referrerpolicy="no-referrer" '
        f'srcdoc="{html.escape(doc, quote=True)}" '
        'style="width:100%;height:860px;border:1px solid #ddd;border-radius:6px;background:#fff">'
        "</iframe>"
    )


def render() -> None:
    root = data.page_root()
    ws = Workspace(Path(root))
    st.title("Reports")
    chosen = period.picker(root, data.version(root))
    _generate(ws, root, chosen)
    folders = list_reports(ws)
    if not folders:
        st.info("No weekly reports yet: generate one above, or run `radar report` (or `radar weekly`).")
        return
    if chosen is None or not ws.report_dir(chosen.label).is_dir():
        st.info(
            data.md(
                f"No report for {chosen.label if chosen else 'this week'}: generate it above, or pick a week with a "
                "report in the sidebar (marked · report)"
            )
        )
        return
    week = chosen.label
    folder = ws.report_dir(week)
    files = report_files(folder)
    if not files:
        st.warning(data.md(f"{folder} holds no report files; generate the week again"))
        return
    cols = st.columns(len(files))
    for col, (suffix, path) in zip(cols, files.items(), strict=True):
        col.download_button(
            f"Download {suffix[1:].upper()}",
            path.read_bytes(),
            file_name=f"{week}-{path.name}",
            mime=MIME[suffix],
            key=f"dl-{week}-{suffix}",
        )
    _recommendations(root, week)
    if ".html" in files:
        # st.iframe runs its HTML with scripts; ours has none and nests the report in an empty sandbox
        st.iframe(sandboxed(files[".html"].read_text(encoding="utf-8", errors="replace")), height=880)
    elif ".md" in files:
        st.caption("no HTML version; the Markdown source:")
        st.code(files[".md"].read_text(encoding="utf-8", errors="replace"), language="markdown")
    if ".md" in files and ".html" in files:
        with st.expander("Markdown source"):
            st.code(files[".md"].read_text(encoding="utf-8", errors="replace"), language="markdown")


def _recommendations(root: str, week: str) -> None:
    """This report's recommendations (read by the report's own loader), each with a Reproduce button where a
    reproduction preset exists."""
    built = period.report(root, week)
    if built is None:
        st.caption("report.json is missing or unreadable: generate the week again for its recommendations")
        return
    recs = built.content.recommendations
    if recs:
        with st.expander(f"Recommendations ({len(recs)})", expanded=False):
            reproduce.recommendations(root, recs, "reports")


def generate(ws: Workspace, week: str) -> BuiltReportJson:
    """Write the report for ISO week ``week`` (what `radar report --week` does, without sending)."""
    from radar.app import steps  # defers scipy, faiss, bm25s

    return BuiltReportJson.of(steps.report(Radar(ws), parse_week(week)))


def _generate(ws: Workspace, root: str, chosen: Period | None) -> None:
    facets = data.facets(root, data.version(root))
    newest = facets.last_paper or facets.last
    last = date.fromisoformat(newest[:10]) if newest else date.today()
    default = chosen.start if chosen is not None else last - timedelta(days=7)
    with st.expander("Generate now", expanded=not list_reports(ws)):
        day = st.date_input("Any day of the week to report on", value=default, key="rp_day")
        label = week_of(day or default).label
        if st.button(f"Generate {label}", key="rp_generate", type="primary"):
            try:
                with st.spinner(f"writing the {label} report"):
                    done = generate(ws, label)
            except RadarError as exc:
                st.error(data.md(f"radar: {exc}"))
                return
            st.session_state[period.KEY] = label
            st.success(
                f"wrote the {label} report: {done.documents:,} documents, {done.recommendations} "
                f"recommendations in {done.seconds:.1f} s"
            )


if __name__ == "__main__":
    render()
