"""Text for the reader: the one LaTeX-to-text step every title, abstract and summary goes through (the report,
`radar trends`, the dashboard), and our own Markdown-lite (backtick code spans) rendered as code.

``plain``: LaTeX in titles and abstracts (``\\textbf{X}``, ``$\\mathcal{O}(n)$``, ``5\\%``) turned into plain text by
pylatexenc; the store keeps the source text. What arXiv abstracts carry besides LaTeX proper is handled too:

- ``\\times`` is "x" ("1.3x speedup"), and a backslash before a quote that follows no letter is an escaped
  quote, not an umlaut;
- unescaped ``%``, ``&`` and ``#`` are literal characters ("50% fewer", "R&D"), not comments or alignment: they
  are escaped before conversion so nothing after them is lost;
- a doubled backslash before a command (``\\\\textit{prosody}``: the source escaped once too often) is one;
- bare braces used for emphasis (``{entropy collapse}``) are dropped, their words kept;
- markup pylatexenc cannot parse (it raises on some unbalanced input) goes through a plain fallback that keeps
  the words of ``\\cmd{words}``, drops other commands and braces, and keeps math's content.

``code_spans`` splits our own text (recommendation reasons, notes) into plain and code parts; ``html_code`` and
``md_code`` render it, escaping every part (reasons quote method names, which come from feeds).
"""

from __future__ import annotations

import re
from functools import lru_cache
from html import escape

from pylatexenc.latex2text import LatexNodes2Text

_LITERAL = re.compile(r"(?<!\\)([%&#])")
_DOUBLED = re.compile(r"\\\\(?=[A-Za-z])")  # \\textit -> \textit
_LATEXISH = re.compile(r"[\\${}]")
_COMMAND_ARG = re.compile(r"\\[A-Za-z]+\*?\s*\{([^{}]*)\}")
_COMMAND = re.compile(r"\\[A-Za-z]+\*?|\\(.)")
_MATH = re.compile(r"\$\$?([^$]*)\$\$?")
_CODE = re.compile(r"`([^`\n]{1,300})`")
# a backslash before a quote that does not follow a letter is an escaped quote, not an umlaut (Schr\\"odinger)
_ESCAPED_QUOTE = re.compile(r'(?<![A-Za-z])\\"|\\"(?![A-Za-z{])')
_TIMES = re.compile(r"\\times(?![A-Za-z])")  # "1.3\\times speedup": the converter would eat the space after it


@lru_cache(maxsize=1)
def _converter() -> LatexNodes2Text:
    return LatexNodes2Text(math_mode="text", strict_latex_spaces=False)


def _fallback(text: str) -> str:
    """The words of LaTeX pylatexenc could not parse: ``\\cmd{x}`` -> x (innermost first), math's content kept,
    other commands and every brace dropped, ``\\%`` -> %."""
    out = _MATH.sub(lambda m: m.group(1), text)
    for _ in range(5):  # nested \cmd{\cmd{x}}
        out, n = _COMMAND_ARG.subn(lambda m: m.group(1), out)
        if not n:
            break
    out = _COMMAND.sub(lambda m: m.group(1) or "", out)
    return out.replace("{", "").replace("}", "").replace("~", " ")


def plain(text: str) -> str:
    """``text`` with LaTeX markup rendered as Unicode text (whitespace collapsed); unchanged when it has none."""
    if not text or not _LATEXISH.search(text):
        return text
    source = _TIMES.sub("x", _ESCAPED_QUOTE.sub('"', _DOUBLED.sub(r"\\", text)))
    try:
        out = _converter().latex_to_text(_LITERAL.sub(r"\\\1", source))
    except Exception:  # noqa: BLE001 - malformed markup from a feed: the fallback, never a failed report
        out = _fallback(source)
    if "\\" in out or "{" in out or "}" in out:  # what the converter left (unknown macros, stray braces)
        out = _fallback(out)
    return " ".join(out.replace("\xa0", " ").replace("×", "x").split())


def code_spans(text: str) -> list[tuple[str, bool]]:
    """Our own text as (part, is_code) pairs: `backticked` parts are code."""
    parts: list[tuple[str, bool]] = []
    last = 0
    for m in _CODE.finditer(text or ""):
        if m.start() > last:
            parts.append((text[last : m.start()], False))
        parts.append((m.group(1), True))
        last = m.end()
    if last < len(text or ""):
        parts.append((text[last:], False))
    return parts


def html_code(text: str) -> str:
    """Our text as HTML: every part escaped, code spans in <code>."""
    return "".join(f"<code>{escape(p)}</code>" if code else escape(p) for p, code in code_spans(text))


def md_code(text: str, escape_md: object) -> str:
    """Our text as Markdown: plain parts through ``escape_md`` (the renderer's escaping), code spans as code."""
    out = []
    for part, code in code_spans(text):
        if code:
            out.append(f"`{part}`")
            continue
        lead = " " if part[:1].isspace() else ""
        tail = " " if part[-1:].isspace() and part.strip() else ""
        out.append(lead + str(escape_md(part)) + tail)  # type: ignore[operator]
    return "".join(out)
