"""Characters that change how text around them is shown but are not text: removed from everything Radar
ingests (titles, abstracts, author names, feed tags, people's profiles).

- bidi overrides, embeddings and isolates (U+202A-U+202E, U+2066-U+2069): an RLO in a title makes
  "Report<RLO>slx.exe" display as "Reportexe.xls", in the report, the mail, the webhook and the dashboard;
- zero-width characters (U+200B-U+200D, U+2060, U+FEFF): they hide inside words, so "GRPO" and "GR\u200bPO"
  look the same and are different names, terms and search keys.

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
