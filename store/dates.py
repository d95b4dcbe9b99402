"""The day a document enters the record: what a week, a date filter and a trend window hold.

A paper enters on its first version's announcement, not on its submission date and never on a later
field (``updated``, the crawl's ``first_seen``). arXiv gives a submission its identifier when it announces it,
so a new-style id (``YYMM.NNNNN``) is never announced before the first day of month YYMM; the stored v1
date (``published``, the submission date) can lie days or weeks earlier when a submission was held in
moderation: 2510.05109 was submitted on 2025-09-25 and announced in October, so a reader on Monday
2025-09-29 could not have seen it in the week before. The entry day is the later of the two. Posts,
old-style ids (``cs/0601001``) and other ids enter on ``published``.

``entered(doc_id, published)`` is the rule in Python (the trends' term table); ``entered_sql(alias)`` is the
same rule as an SQL expression (the store's date filters and per-day counts); a test checks they agree.
"""

from __future__ import annotations

import re
from datetime import date

ISO_WEEK = re.compile(r"^(\d{4})-W(\d{2})$")
_NEW_STYLE = re.compile(r"^(\d{2})(0[1-9]|1[0-2])\.\d{4,5}(v\d+)?$")


def id_month_start(doc_id: str) -> str:
    """'2025-10-01T00:00:00Z' for a new-style arXiv id 2510.xxxxx; '' for any other id."""
    m = _NEW_STYLE.match(doc_id)
    return f"20{m.group(1)}-{m.group(2)}-01T00:00:00Z" if m else ""


def entered(doc_id: str, published: str) -> str:
    """The ISO timestamp a document enters the record: the later of ``published`` and its id's month."""
    start = id_month_start(doc_id)
    return start if start > published else published


def entered_sql(alias: str = "d") -> str:
    """``entered`` as an SQLite expression over the ``documents`` row named ``alias``."""
    month = f"'20' || substr({alias}.id, 1, 2) || '-' || substr({alias}.id, 3, 2) || '-01T00:00:00Z'"
    new_style = (
        f"({alias}.id GLOB '[0-9][0-9][0-1][0-9].[0-9][0-9][0-9][0-9]' "
        f"OR {alias}.id GLOB '[0-9][0-9][0-1][0-9].[0-9][0-9][0-9][0-9][0-9]' "
        f"OR {alias}.id GLOB '[0-9][0-9][0-1][0-9].[0-9][0-9][0-9][0-9]v[0-9]*' "
        f"OR {alias}.id GLOB '[0-9][0-9][0-1][0-9].[0-9][0-9][0-9][0-9][0-9]v[0-9]*') "
        f"AND substr({alias}.id, 3, 2) BETWEEN '01' AND '12'"
    )
    return f"(CASE WHEN {new_style} AND {month} > {alias}.published THEN {month} ELSE {alias}.published END)"


def week_monday(text: str) -> date | None:
    """Monday of the ISO week written YYYY-Www; None when ``text`` is not written so. Raises ValueError when it
    is, but its year has no such week (2025-W60). The one parser of week labels: the report's periods and the
    method cards' weeks both read them here, each with its own one-line error."""
    m = ISO_WEEK.match(text.strip())
    if not m:
        return None
    return date.fromisocalendar(int(m.group(1)), int(m.group(2)), 1)
