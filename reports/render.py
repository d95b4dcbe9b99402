"""Render report content (content.gather) to Markdown and a self-contained HTML page.

Both go through Jinja2 with escaping on for every value: HTML autoescape, and in Markdown a
finalize hook that escapes HTML specials and Markdown punctuation, so text from feeds cannot
inject markup in either. Charts are inline SVG built here from numbers only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape

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
    text = " ".join(str(value).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return "".join(_MD_SPECIAL.get(c, c) for c in text)


def md_url(value: Any) -> Markup:
    """A link target for Markdown: only http(s), with parentheses and spaces percent-encoded."""
    url = str(value or "")
    if not url.startswith(("http://", "https://")):
        return Markup("")
    return Markup(url.replace(" ", "%20").replace("(", "%28").replace(")", "%29").replace("<", "%3C")
                  .replace(">", "%3E"))  # fmt: skip


def safe_url(value: Any) -> str:
    """Links from documents (untrusted): http(s) only."""
    url = str(value or "")
    return url if url.startswith(("http://", "https://")) else ""


def folder_url(path: Any) -> str:
    """A file:// link to a local folder Radar wrote (a run's outputs), percent-encoded."""
    from pathlib import Path

    return Path(str(path)).resolve().as_uri()


def pct(value: float | None) -> str:
    if value is None:
        return "new"
    return f"{value:+.0f}%"


def bars_svg(counts: list[int], *, width: int = 132, height: int = 30, labels: list[str] | None = None,
             title: str = "") -> Markup:  # fmt: skip
    """A small bar chart; the last bar (this period) in the accent colour. Numbers only go in."""
    n = max(len(counts), 1)
    peak = max(max(counts, default=0), 1)
    gap = 2
    bar_w = max((width - gap * (n - 1)) / n, 1.0)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">']  # fmt: skip
    if title:
        parts.append(f"<title>{escape(title)}</title>")
    for i, c in enumerate(counts):
        h = max(round((height - 2) * int(c) / peak, 1), 1.0 if c else 0.5)
        x = round(i * (bar_w + gap), 1)
        colour = ACCENT if i == n - 1 else MUTED
        tip = f"{escape(labels[i])}: {int(c)}" if labels else str(int(c))
        parts.append(f'<rect x="{x}" y="{round(height - h, 1)}" width="{round(bar_w, 1)}" height="{h}" '
                     f'fill="{colour}"><title>{tip}</title></rect>')  # fmt: skip
    parts.append("</svg>")
    return Markup("".join(parts))


def _env(markdown: bool) -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES), autoescape=not markdown, undefined=StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
        finalize=md_escape if markdown else None,
    )  # fmt: skip
    env.filters.update(pct=pct, md_url=md_url, safe_url=safe_url, folder_url=folder_url, bars=bars_svg)
    return env


_ENVS: dict[bool, Environment] = {}


def render(content: dict[str, Any], fmt: str) -> str:
    markdown = fmt == "md"
    env = _ENVS.setdefault(markdown, _env(markdown))
    return env.get_template("report.md.j2" if markdown else "report.html.j2").render(r=content)


def render_text(content: dict[str, Any]) -> str:
    """The plain-text part of the email: the Markdown, which reads fine as text."""
    return render(content, "md")
