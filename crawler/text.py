"""Reduce untrusted HTML from feeds to plain text. Nothing from a feed is kept as markup.

Script, style and similar elements are dropped with their content; block elements become
spaces; entities are decoded; whitespace is collapsed. The result is safe to store and must
still be escaped wherever it is shown (it may legitimately contain '<' characters).
"""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser

from radar.store.text import strip_invisible

_DROP = frozenset(
    {
        "script",
        "style",
        "noscript",
        "iframe",
        "object",
        "embed",
        "template",
        "svg",
        "math",
        "head",
        "title",
        "textarea",
        "select",
        "applet",
        "frameset",
        "frame",
        "xml",
    }
)
_BLOCK = frozenset(
    {
        "p",
        "div",
        "br",
        "li",
        "ul",
        "ol",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "tr",
        "td",
        "th",
        "table",
        "blockquote",
        "pre",
        "section",
        "article",
        "hr",
        "dd",
        "dt",
        "figure",
    }
)
_WS = re.compile(r"\s+")
_CTRL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_LOOKS_HTML = re.compile(r"<[a-zA-Z!/?]|&[#a-zA-Z0-9]+;")


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.drop_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _DROP:
            self.drop_depth += 1
        elif tag in _BLOCK:
            self.parts.append(" ")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCK:
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _DROP:
            self.drop_depth = max(0, self.drop_depth - 1)
        elif tag in _BLOCK:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self.drop_depth:
            self.parts.append(data)


def html_to_text(value: str | None, max_chars: int = 4000, _passes: int = 2) -> str:
    """Plain text from an HTML (or plain) fragment, at most ``max_chars`` characters."""
    if not value:
        return ""
    if _LOOKS_HTML.search(value):
        parser = _TextExtractor()
        try:
            parser.feed(value)
            parser.close()
            value = "".join(parser.parts)
        except Exception:  # noqa: BLE001 - HTMLParser on hostile input: fall back to crude stripping
            value = unescape(re.sub(r"<[^>]*>", " ", value))
        # a second pass catches markup that was entity-escaped in the feed (&lt;script&gt;...)
        if _passes > 1 and re.search(r"<[a-zA-Z/!]", value):
            return html_to_text(value, max_chars, _passes - 1)
        value = re.sub(r"<[a-zA-Z/!][^>]*>?", " ", value) if _passes <= 1 else value
    text = _WS.sub(" ", _CTRL.sub(" ", strip_invisible(value))).strip()
    if len(text) > max_chars:
        text = text[: max_chars - 1].rsplit(" ", 1)[0] + "…"
    return text


_CONTROL_C1 = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def clean_text(text: str, limit: int) -> str:
    """Control characters, bidi controls and zero-width characters removed, whitespace collapsed like
    " ".join(text.split()), at most ``limit`` characters. Most corpus text is already clean: ``isprintable``
    (in C) is False for any control, format (bidi, zero-width) or whitespace character but the plain space,
    so it decides before a new string is built."""
    if not text:
        return text
    if not text.isprintable() or text[0] == " " or text[-1] == " " or "  " in text:
        text = " ".join(_CONTROL_C1.sub(" ", strip_invisible(text)).split())
    if len(text) > limit:
        text = text[: limit - 1].rsplit(" ", 1)[0] + "…"
    return text
