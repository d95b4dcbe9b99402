"""Write one period's report into its folder (the workspace names it: reports/<period>/).

report.md    Markdown (also the plain-text part of the email)
report.html  self-contained HTML (inline CSS and SVG charts)
report.json  the content as data (for the dashboard and for tests)
report.pdf   optional, when WeasyPrint is installed

The composition root (app.steps.report) computes the trends, gathers the content and calls
``write_report``; ``load_report`` reads one back (to retry its failed deliveries).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from radar.reports.config import ReportConfig
from radar.reports.errors import ReportError
from radar.reports.period import Period, period_from_label
from radar.reports.render import render
from radar.reports.result import ReportContent
from radar.store.files import write_set_atomic
from radar.store.jsonio import loads_bounded


@dataclass
class BuiltReport:
    period: Period
    content: ReportContent
    paths: dict[str, Path] = field(default_factory=dict)
    seconds: float = 0.0
    trends_note: str = ""

    @property
    def folder(self) -> Path:
        return next(iter(self.paths.values())).parent


class BuiltReportJson(msgspec.Struct, frozen=True, kw_only=True):
    """``BuiltReport`` as `radar report --json` prints it (with the deliveries the command made)."""

    period: str
    start: str
    end: str
    paths: dict[str, str]
    documents: int
    papers: int
    posts: int
    recommendations: int
    seconds: float  # to 3 places
    trends: str

    @classmethod
    def of(cls, built: BuiltReport) -> BuiltReportJson:
        p, h = built.period, built.content.headline
        return cls(
            period=p.label,
            start=p.start.isoformat(),
            end=p.end.isoformat(),
            paths={k: str(v) for k, v in built.paths.items()},
            documents=h.documents,
            papers=h.papers,
            posts=h.posts,
            recommendations=len(built.content.recommendations),
            seconds=round(built.seconds, 3),
            trends=built.trends_note or "analysis.trends",
        )


def _pdf(html: str, base: Path) -> bytes:
    try:
        from weasyprint import HTML  # type: ignore[import-not-found]  # optional extra
    except ImportError:
        raise ReportError("PDF needs WeasyPrint: `pip install weasyprint`, or use --format md,html") from None
    return HTML(string=html, base_url=str(base)).write_pdf()  # type: ignore[no-any-return]


def report_file(folder: Path, fmt: str) -> Path:
    """The file of one format (md, html, json, pdf) in a report folder: the one place its name is spelled."""
    return folder / f"report.{fmt}"


def write_report(folder: Path, period: Period, content: ReportContent, cfg: ReportConfig) -> BuiltReport:
    """Render ``content`` in the configured formats into ``folder``, plus report.json: all rendered first,
    then written as one set (``write_set_atomic``: all the files of the week appear, or none changes)."""
    data = content.document()
    built = BuiltReport(period, content, trends_note=content.notes.trends)
    html = render(data, "html") if ("html" in cfg.formats or "pdf" in cfg.formats) else ""
    files: dict[Path, bytes] = {}
    for fmt in cfg.formats:
        path = report_file(folder, fmt)
        if fmt == "pdf":
            files[path] = _pdf(html, folder)
        else:
            files[path] = (html if fmt == "html" else render(data, fmt)).encode("utf-8")
        built.paths[fmt] = path
    built.paths["json"] = report_file(folder, "json")
    files[built.paths["json"]] = json.dumps(data, indent=1, ensure_ascii=False).encode("utf-8")
    write_set_atomic(files)
    return built


def load_report(folder: Path) -> BuiltReport | None:
    """A report written earlier into ``folder``; None if its files are gone or unreadable."""
    data = report_file(folder, "json")
    if not data.is_file():
        return None
    try:
        content = ReportContent.read(loads_bounded(data.read_text(encoding="utf-8")))
    except (ValueError, TypeError, KeyError, AttributeError, OSError):  # a damaged or foreign report.json
        return None
    paths = {p.suffix.lstrip("."): p for p in sorted(folder.glob(report_file(folder, "*").name)) if p != data}
    paths["json"] = data
    return BuiltReport(period_from_label(folder.name), content, paths, trends_note=content.notes.trends)
