"""One secret scrubber for every error text that can reach a file, a message or the database.

``scrub(text, secrets)`` removes, from anywhere in ``text``:
- the user info (``user:password@``), query string and fragment of every URL, and a query string
  after a bare path (urllib3 writes ``... with url: /hook?token=...``);
- every given secret (an API key, a password, a webhook path) in the forms it takes on the way out:
  as written, percent-encoded (upper or lower case hex, ``+`` for space) and as requests re-encodes
  it (``%7E`` back to ``~``, non-ASCII to ``%C3%A9``).

``url_secrets(url)`` names the secret parts of a configured URL (its user info, query values,
fragment; with ``path=True`` its path too, which is the secret of a Slack webhook).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit

from requests.utils import requote_uri

MASK = "***"
MIN_SECRET = 3  # shorter strings are not scrubbed one by one (they would blank the message); URLs still are
_URL = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^\s'\"<>`]+)")
_BARE_QUERY = re.compile(r"(?<=[\w/.~%\-])\?[^\s'\"<>`)\]]+")


def _scrub_url(match: re.Match[str]) -> str:
    scheme, rest = match.group(1), match.group(2)
    tail = ""
    while rest and rest[-1] in ".,;:)]}":  # sentence punctuation after a URL is not part of it
        tail = rest[-1] + tail
        rest = rest[:-1]
    slash = rest.find("/")
    authority, path = (rest, "") if slash < 0 else (rest[:slash], rest[slash:])
    if "@" in authority:
        authority = MASK + "@" + authority.rsplit("@", 1)[1]
    for sep in ("?", "#"):
        if sep in authority:  # http://host?query with no path
            authority, cut = authority.split(sep, 1)
            path = sep + cut + path
    for sep in ("?", "#"):
        if sep in path:
            path = path.split(sep, 1)[0] + sep + MASK
            break
    return scheme + authority + path + tail


def variants(secret: str) -> set[str]:
    """The forms a secret takes in URLs and error messages."""
    out = {secret}
    for s in (secret, unquote(secret)):
        out |= {s, quote(s, safe=""), quote(s, safe="/:@"), quote_plus(s), requote_uri(s)}
        out |= {v.replace("~", "%7E") for v in list(out)}
    return {v for v in out if len(v) >= MIN_SECRET}


def url_secrets(url: str, *, path: bool = False) -> list[str]:
    """The parts of a configured URL that are secrets (and the URL itself)."""
    if not url:
        return []
    try:
        parts = urlsplit(url)
        username, password = parts.username, parts.password
    except ValueError:
        return [url]
    out = [url, parts.query, parts.fragment, username or "", password or ""]
    out += [v for _, v in parse_qsl(parts.query, keep_blank_values=True)]
    if path and parts.path.strip("/"):
        out.append(parts.path)
        out += [seg for seg in parts.path.split("/") if len(seg) >= 8]  # a token segment alone
    return [s for s in out if s]


def scrub(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every given secret and every URL's credentials, query and fragment masked."""
    forms = sorted({v for s in secrets if s for v in variants(s)}, key=len, reverse=True)
    for form in forms:
        text = re.sub(re.escape(form), MASK, text, flags=re.IGNORECASE)
    text = _URL.sub(_scrub_url, text)
    return _BARE_QUERY.sub("?" + MASK, text)


def scrub_line(text: str, secrets: Iterable[str] = (), limit: int = 300) -> str:
    """``scrub`` on one line of at most ``limit`` characters (for a table column or a CLI line)."""
    return " ".join(scrub(text, secrets).split())[:limit]
