"""LaTeX in titles and abstracts (``\\textbf{X}``, ``$\\mathcal{O}(n)$``, ``5\\%``) turned into plain text
for the reader, by pylatexenc; applied once, when the report is gathered (the store keeps the source text).

Unescaped ``%``, ``&`` and ``#`` are literal characters in arXiv abstracts ("50% fewer", "R&D"), not LaTeX
comments or alignment: they are escaped before conversion so nothing after them is lost. Text without a
backslash or a dollar sign is returned as it is.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pylatexenc.latex2text import LatexNodes2Text

_LITERAL = re.compile(r"(?<!\\)([%&#])")


@lru_cache(maxsize=1)
def _converter() -> LatexNodes2Text:
    return LatexNodes2Text(math_mode="text", strict_latex_spaces=False)


def plain(text: str) -> str:
    """``text`` with LaTeX markup rendered as Unicode text (whitespace collapsed); unchanged when it has none."""
    if "\\" not in text and "$" not in text:
        return text
    try:
        out = _converter().latex_to_text(_LITERAL.sub(r"\\\1", text))
    except Exception:  # noqa: BLE001 - malformed markup from a feed: show the source text, never fail the report
        return text
    return " ".join(out.replace("\xa0", " ").split())
