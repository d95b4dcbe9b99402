"""A paper's text with its LaTeX markup reduced to words (what every reader of titles and abstracts sees first)."""

from __future__ import annotations

import re

_DOUBLED = re.compile(r"\\\\(?=[A-Za-z])")  # \\textit (escaped once too often) -> \textit
_LATEXISH = re.compile(r"[\\${}~]")
_MATH = re.compile(r"\$\$?([^$]{0,200})\$\$?")
_COMMAND_ARG = re.compile(r"\\[A-Za-z]+\*?\s*\{([^{}]*)\}")
_COMMAND = re.compile(r"\\[A-Za-z]+\*?\s?|\\(.)")


# symbols a reader needs (a systems paper's "1.3$\\times$ speedup"), as plain characters; the rest of a command
# is dropped
SYMBOLS = {
    "times": "x", "approx": "~", "sim": "~", "leq": "<=", "le": "<=", "geq": ">=", "ge": ">=", "pm": "+/-",
    "rightarrow": "->", "to": "->", "cdot": "*", "infty": "infinity", "%": "%", "&": "&", "#": "#", "_": "_",
}  # fmt: skip
_SYMBOL = re.compile(r"\\(times|approx|sim|leq|le|geq|ge|pm|rightarrow|to|cdot|infty)(?![A-Za-z])")
# a backslash before a quote that does not follow a letter is an escaped quote ("\\"word\\""), not an umlaut
# (Schr\\"odinger)
_ESCAPED_QUOTE = re.compile(r'(?<![A-Za-z])\\"|\\"(?![A-Za-z{])')


def plain_text(text: str) -> str:
    """``text`` with LaTeX markup reduced to its words, whitespace collapsed: "$\\textbf{D}$ecoupled" ->
    "Decoupled", "{Quantile Advantage Estimation}" -> "Quantile Advantage Estimation", "5\\%" -> "5%",
    "1.3$\\times$" -> "1.3x", an escaped quote a quote. A cheap pass (no parser: every paper goes through it),
    unchanged text when there is no markup."""
    if "×" in text:
        text = text.replace("×", "x")
    if _LATEXISH.search(text):
        text = _DOUBLED.sub(r"\\", text)
        text = _ESCAPED_QUOTE.sub('"', text)
        text = _SYMBOL.sub(lambda m: SYMBOLS[m.group(1)], text)
        text = _MATH.sub(lambda m: m.group(1), text)
        for _ in range(4):  # nested \cmd{\cmd{x}}
            text, n = _COMMAND_ARG.subn(lambda m: m.group(1), text)
            if not n:
                break
        text = _COMMAND.sub(lambda m: m.group(1) or "", text)
        text = text.replace("{", "").replace("}", "").replace("~", " ")
    return " ".join(text.split())
