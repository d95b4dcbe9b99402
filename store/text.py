"""Characters that change how text around them is shown but are not text: removed from everything Radar
ingests (titles, abstracts, author names, feed tags, people's profiles).

- bidi overrides, embeddings and isolates (U+202A-U+202E, U+2066-U+2069): an RLO in a title makes
  "Report<RLO>slx.exe" display as "Reportexe.xls", in the report, the mail, the webhook and the dashboard;
- zero-width characters (U+200B-U+200D, U+2060, U+FEFF): they hide inside words, so "GRPO" and "GR\u200bPO"
  look the same and are different names, terms and search keys.

Names that mix scripts (``DАPO`` with a Cyrillic А) look like a name they are not: ``fold_lookalikes`` maps their
Cyrillic and Greek letters that are drawn like Latin ones to those Latin letters (the name's spelling key, for
matching), and ``script_mark`` says which letters they were (for showing).

Right-to-left text itself is kept; where HTML shows feed text it sits in ``<bdi>`` so its direction cannot
leak into what follows (reports.render's ``bdi`` filter).
"""

from __future__ import annotations

import re

INVISIBLE_CHARS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200b\u200c\u200d\u2060\ufeff"
INVISIBLE = re.compile(f"[{INVISIBLE_CHARS}]")


def strip_invisible(text: str) -> str:
    """``text`` without bidi controls and zero-width characters (unchanged, and not copied, when it has none)."""
    return INVISIBLE.sub("", text) if INVISIBLE.search(text) else text


# Cyrillic and Greek letters drawn like a Latin letter (their rows of Unicode's confusables.txt, UTS #39)
LOOKALIKES = str.maketrans(
    {
        # Cyrillic
        "А": "A", "В": "B", "С": "C", "Е": "E", "Н": "H", "І": "I", "Ј": "J", "К": "K", "М": "M", "О": "O",
        "Р": "P", "Ѕ": "S", "Т": "T", "Х": "X", "У": "Y", "Ԛ": "Q", "Ԝ": "W",
        "а": "a", "с": "c", "ԁ": "d", "е": "e", "һ": "h", "і": "i", "ј": "j", "ӏ": "l", "о": "o", "р": "p",
        "ԛ": "q", "ѕ": "s", "ԝ": "w", "х": "x", "у": "y",
        # Greek
        "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O",
        "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
        "ι": "i", "ν": "v", "ο": "o", "ρ": "p", "υ": "u", "χ": "x",
    }
)  # fmt: skip
_LATIN = re.compile(r"[A-Za-z]")
_CYRILLIC_GREEK = re.compile(r"[\u0370-\u03ff\u0400-\u052f]")


def mixed_script(text: str) -> bool:
    """Whether ``text`` mixes Latin letters with Cyrillic or Greek ones (as no real name of this field does)."""
    return _CYRILLIC_GREEK.search(text) is not None and _LATIN.search(text) is not None


def fold_lookalikes(text: str) -> str:
    """``text`` with its Cyrillic and Greek lookalikes of Latin letters made Latin, when it mixes the scripts
    (``DАPO`` with a Cyrillic А -> ``DAPO``); a word wholly in one script is left as it is."""
    return text.translate(LOOKALIKES) if mixed_script(text) else text


def script_mark(text: str) -> str:
    """'' for a name in one script; else what to show beside it: "mixed scripts: Cyrillic А (U+0410)"."""
    if not mixed_script(text):
        return ""
    odd = dict.fromkeys(c for c in text if _CYRILLIC_GREEK.match(c))
    named = ", ".join(f"{_script(c)} {c} (U+{ord(c):04X})" for c in list(odd)[:3])
    return f"mixed scripts: {named}"


def _script(char: str) -> str:
    return "Greek" if "\u0370" <= char <= "\u03ff" else "Cyrillic"
