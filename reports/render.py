"""Render report content (content.gather) to Markdown and a self-contained HTML page.

Both go through Jinja2 with escaping on for every value: HTML autoescape, and in Markdown a
finalize hook that escapes HTML specials and Markdown punctuation, so text from feeds cannot
inject markup in either. Charts are built here from numbers only: inline SVG in the page written to
the report folder, and for the email (where Gmail and other clients drop inline SVG) PNG images
drawn with matplotlib's Agg backend, referenced as ``<img src="cid:...">`` (see ``render_email_html``).
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, pass_context
from jinja2.runtime import Context
from markupsafe import Markup, escape

from radar.reports.result import ReportDocument
from radar.reports.text import html_code, md_code
from radar.store.text import strip_invisible

TEMPLATES = Path(__file__).with_name("templates")
_MD_SPECIAL = {c: "\\" + c for c in "\\`*_[]|#"}
ACCENT = "#2563eb"
MUTED = "#cbd5e1"


def md_escape(value: Any) -> str:
    """Text for Markdown: HTML specials as entities (Markdown passes raw HTML through), punctuation
    that would start emphasis, links, code or table cells backslash-escaped, newlines folded."""
    if value is None:
        return ""
    if isinstance(value, Markup):
        return str(value)
    text = " ".join(strip_invisible(str(value)).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "".join(_MD_SPECIAL.get(c, c) for c in text)


def md_url(value: Any) -> Markup:
    """A link target for Markdown: only http(s), with parentheses and spaces percent-encoded."""
    url = str(value or "")
    if not url.startswith(("http://", "https://")):
        return Markup("")
    return Markup(
        url.replace(" ", "%20").replace("(", "%28").replace(")", "%29").replace("<", "%3C").replace(">", "%3E")
    )


def safe_url(value: Any) -> str:
    """Links from documents (untrusted): http(s) only."""
    url = str(value or "")
    return url if url.startswith(("http://", "https://")) else ""


def folder_url(path: Any) -> str:
    """A file:// link to a local folder Radar wrote (a run's outputs), percent-encoded."""
    return Path(str(path)).resolve().as_uri()


def bdi(value: Any) -> Markup:
    """Feed text in HTML inside ``<bdi>`` (escaped): a right-to-left title keeps its direction to itself."""
    text = "" if value is None else value if isinstance(value, Markup) else strip_invisible(str(value))
    return Markup("<bdi>{}</bdi>").format(text)  # Markup.format escapes the value


def pct(value: float | None) -> str:
    if value is None:
        return "new"
    return f"{value:+.0f}%"


def share(part: int, whole: int) -> str:
    """``part`` of ``whole`` as a rounded percentage ('-' of nothing)."""
    return f"{100 * part / whole:.0f}%" if whole else "-"


def bars_svg(
    counts: list[int], *, width: int = 132, height: int = 30, labels: list[str] | None = None, title: str = ""
) -> Markup:
    """A small bar chart; the last bar (this period) in the accent colour. Numbers only go in."""
    n = max(len(counts), 1)
    peak = max(max(counts, default=0), 1)
    gap = 2
    bar_w = max((width - gap * (n - 1)) / n, 1.0)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">'
    ]
    if title:
        parts.append(f"<title>{escape(title)}</title>")
    for i, c in enumerate(counts):
        h = max(round((height - 2) * int(c) / peak, 1), 1.0 if c else 0.5)
        x = round(i * (bar_w + gap), 1)
        colour = ACCENT if i == n - 1 else MUTED
        tip = f"{escape(labels[i])}: {int(c)}" if labels else str(int(c))
        parts.append(
            f'<rect x="{x}" y="{round(height - h, 1)}" width="{round(bar_w, 1)}" height="{h}" '
            f'fill="{colour}"><title>{tip}</title></rect>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


# -- charts for email: PNG images attached inline ----------------------------------------------------------
PNG_SCALE = 2  # pixels per CSS pixel: sharp on phones (2x screens), still a few hundred bytes a chart


def bars_png(counts: list[int], *, width: int = 132, height: int = 30) -> bytes:
    """The same bar chart as ``bars_svg`` as a PNG of width x height CSS pixels (drawn at PNG_SCALE)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # Agg explicitly, no pyplot state
    from matplotlib.figure import Figure

    dpi = 100 * PNG_SCALE
    fig = Figure(figsize=(width / 100, height / 100), dpi=dpi, facecolor="white")
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    n = max(len(counts), 1)
    peak = max(max(counts, default=0), 1)
    heights = [max(int(c), peak * 0.03) if c else peak * 0.015 for c in counts]  # zero still shows a sliver
    colours = [ACCENT if i == n - 1 else MUTED for i in range(len(counts))]
    ax.bar(range(len(counts)), heights, width=0.85, color=colours, linewidth=0)
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(0, peak)
    ax.set_axis_off()
    buf = io.BytesIO()
    fig.savefig(
        buf, format="png", dpi=dpi, facecolor="white", metadata={"Software": None}, pil_kwargs={"optimize": True}
    )
    return buf.getvalue()


def chart_alt(counts: list[int], labels: list[str] | None, title: str) -> str:
    """Alt text that gives the numbers: 'documents per period: 2024-W01 12, ..., 2024-W05 30'."""
    if labels:
        values = [f"{lab} {int(c)}" for lab, c in zip(labels, counts, strict=False)]
    else:
        values = [str(int(c)) for c in counts]
    return f"{title}: {', '.join(values)}" if title else ", ".join(values)


@dataclass(frozen=True)
class Chart:
    """One PNG chart of an email; ``cid`` without angle brackets, as ``src="cid:..."`` names it."""

    cid: str
    png: bytes
    width: int
    height: int
    alt: str


@dataclass
class ChartSink:
    """Collects the charts while the email HTML renders; identical charts share one image."""

    charts: dict[str, Chart] = field(default_factory=dict)

    def img(self, counts: list[int], width: int, height: int, labels: list[str] | None, title: str) -> Markup:
        png = bars_png(counts, width=width, height=height)
        cid = f"chart-{hashlib.sha256(png).hexdigest()[:16]}@research-radar"
        alt = chart_alt(counts, labels, title)
        self.charts.setdefault(cid, Chart(cid, png, width, height, alt))
        tag = '<img src="cid:{}" width="{}" height="{}" alt="{}" style="border:0;vertical-align:middle">'
        return Markup(tag).format(cid, int(width), int(height), alt)  # Markup.format escapes the values


@pass_context
def _bars(
    ctx: Context,
    counts: list[int],
    *,
    width: int = 132,
    height: int = 30,
    labels: list[str] | None = None,
    title: str = "",
) -> Markup:
    """The template's chart filter: an <img> of a PNG when rendering for email, else inline SVG."""
    sink = ctx.get("charts")
    if isinstance(sink, ChartSink):
        return sink.img(counts, width, height, labels, title)
    return bars_svg(counts, width=width, height=height, labels=labels, title=title)


def _env(markdown: bool) -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=not markdown,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=md_escape if markdown else None,
    )
    code = (
        (lambda v: Markup(md_code(str(v or ""), md_escape)))
        if markdown
        else (lambda v: Markup(html_code(str(v or ""))))
    )
    env.filters.update(
        share=share, pct=pct, md_url=md_url, safe_url=safe_url, folder_url=folder_url, bars=_bars, code=code, bdi=bdi
    )
    return env


_ENVS: dict[bool, Environment] = {}


def render(content: ReportDocument, fmt: str) -> str:
    markdown = fmt == "md"
    env = _ENVS.setdefault(markdown, _env(markdown))
    return env.get_template("report.md.j2" if markdown else "report.html.j2").render(r=content)


def render_email_html(content: ReportDocument) -> tuple[str, list[Chart]]:
    """The HTML page for email: the same template, its charts as ``<img src="cid:...">`` with the PNGs
    to attach (no inline SVG, which Gmail and others do not display)."""
    sink = ChartSink()
    html = _ENVS.setdefault(False, _env(False)).get_template("report.html.j2").render(r=content, charts=sink)
    return html, list(sink.charts.values())


def render_text(content: ReportDocument) -> str:
    """The plain-text part of the email: the Markdown, which reads fine as text."""
    return render(content, "md")
