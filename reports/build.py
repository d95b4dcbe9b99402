"""Build one period's report: trends, content, files under workspace/reports/<period>/.

report.md    Markdown (also the plain-text part of the email)
report.html  self-contained HTML (inline CSS and SVG charts)
report.json  the content as data (for the dashboard and for tests)
report.pdf   optional, when WeasyPrint is installed
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from radar.reports.config import Profile, ReportConfig
from radar.reports.content import EMPTY_TRENDS, gather
from radar.reports.errors import ReportError
from radar.reports.period import Period
from radar.reports.render import render
from radar.store import Store, Workspace
from radar.store.errors import RadarError


@dataclass
class BuiltReport:
    period: Period
    content: dict[str, Any]
    paths: dict[str, Path] = field(default_factory=dict)
    seconds: float = 0.0
    trends_note: str = ""

    @property
    def folder(self) -> Path:
        return next(iter(self.paths.values())).parent

    def as_dict(self) -> dict[str, Any]:
        h = self.content["headline"]
        return {
            "period": self.period.label,
            "start": self.period.start.isoformat(),
            "end": self.period.end.isoformat(),
            "paths": {k: str(v) for k, v in self.paths.items()},
            "documents": h["documents"],
            "papers": h["papers"],
            "posts": h["posts"],
            "recommendations": len(self.content["recommendations"]),
            "seconds": round(self.seconds, 3),
            "trends": self.trends_note or "analysis.trends",
        }


def report_config(ws: Workspace, formats: str | None = None) -> ReportConfig:
    return ReportConfig.from_section(ws.config().section("report"), formats)


def profile_config(ws: Workspace) -> Profile:
    return Profile.from_section(ws.config().section("profile"))


def compute_trends(ws: Workspace, store: Store, as_of: date) -> tuple[dict[str, Any], str]:
    """analysis.trends as of the week's end, over a month window: a week holds 400-1,000 papers, too few
    for significance (the trends backtest flagged most known rises only with months); the report's
    own per-tag weekly series come from the store. Empty trends and a note saying why when they fail."""
    from radar.analysis.trends import compute_trends as trends_of  # loads numpy and scikit-learn: only when used

    try:
        return trends_of(ws, store, as_of=as_of, window="month"), ""
    except RadarError as exc:  # e.g. too little data for trends: the report still goes out, and says why
        return dict(EMPTY_TRENDS), f"trends not available: {exc}"


def _pdf(html: str, base: Path) -> bytes:
    try:
        from weasyprint import HTML  # type: ignore[import-not-found]
    except ImportError:
        raise ReportError("PDF needs WeasyPrint: `pip install weasyprint`, or use --format md,html") from None
    return HTML(string=html, base_url=str(base)).write_pdf()  # type: ignore[no-any-return]


def build_report(
    ws: Workspace,
    store: Store,
    period: Period,
    cfg: ReportConfig,
    profile: Profile,
    *,
    trends: dict[str, Any] | None = None,
    trends_note: str = "",
) -> BuiltReport:
    started = time.perf_counter()
    note = trends_note
    if trends is None:
        trends, note = compute_trends(ws, store, period.end)
    content = gather(ws, store, period, cfg, profile, trends=trends)
    content["notes"]["trends"] = note
    folder = ws.report_dir(period.label)
    built = BuiltReport(period, content, trends_note=note)
    html = render(content, "html") if ("html" in cfg.formats or "pdf" in cfg.formats) else ""
    for fmt in cfg.formats:
        path = folder / f"report.{fmt}"
        if fmt == "pdf":
            ws.write_bytes_atomic(path, _pdf(html, folder))
        else:
            ws.write_text_atomic(path, html if fmt == "html" else render(content, fmt))
        built.paths[fmt] = path
    ws.write_text_atomic(folder / "report.json", json.dumps(content, indent=1, ensure_ascii=False))
    built.paths["json"] = folder / "report.json"
    built.seconds = time.perf_counter() - started
    return built


def load_report(ws: Workspace, label: str) -> BuiltReport | None:
    """A report written earlier (for retrying its failed deliveries); None if its files are gone."""
    from radar.reports.period import period_from_label

    folder = ws.report_dir(label)
    data = folder / "report.json"
    if not data.is_file():
        return None
    content = json.loads(data.read_text(encoding="utf-8"))
    paths = {p.suffix.lstrip("."): p for p in sorted(folder.glob("report.*")) if p.suffix != ".json"}
    paths["json"] = data
    return BuiltReport(period_from_label(label), content, paths)
