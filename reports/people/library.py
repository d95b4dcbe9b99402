"""Import a person's library: a BibTeX file (bibtexparser) or a Zotero CSL JSON export, matched to arXiv ids.

Matching, in order: an explicit arXiv id (``eprint`` with archivePrefix arXiv, an ``arxiv`` field, an arXiv
URL, CSL ``number``/``URL``/``note``), a DOI with an arXiv link (10.48550/arXiv.X), then the normalised title
against the workspace's documents. Entries that match nothing are listed, not dropped silently.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from radar.crawler.documents import Documents
from radar.reports.errors import ReportError
from radar.reports.people.repository import People
from radar.store.jsonio import loads_bounded
from radar.store.table import Database

_NEW_ID = r"\d{4}\.\d{4,5}"
_OLD_ID = r"[a-z\-]+(?:\.[A-Z]{2})?/\d{7}"
ARXIV_URL = re.compile(rf"arxiv\.org/(?:abs|pdf|html)/({_NEW_ID}|{_OLD_ID})(?:v\d+)?", re.IGNORECASE)
ARXIV_DOI = re.compile(rf"10\.48550/arxiv\.({_NEW_ID}|{_OLD_ID})(?:v\d+)?", re.IGNORECASE)
BARE_ID = re.compile(rf"^(?:arxiv:)?\s*({_NEW_ID}|{_OLD_ID})(?:v\d+)?$", re.IGNORECASE)
ARXIV_PREFIXED = re.compile(rf"arxiv:\s*({_NEW_ID})(?:v\d+)?", re.IGNORECASE)


class LibraryError(ReportError):
    """A library file cannot be read (bad BibTeX, bad JSON, unknown format)."""


@dataclass(frozen=True)
class Entry:
    key: str
    title: str
    arxiv_id: str = ""  # an explicit id found in the entry (eprint, url, DOI)
    how: str = ""  # where the id came from: eprint, url, doi


@dataclass
class Matched:
    entry: Entry
    doc_id: str
    how: str  # eprint, url, doi or title


@dataclass
class LibraryMatch:
    matched: list[Matched] = field(default_factory=list)
    unmatched: list[Entry] = field(default_factory=list)

    @property
    def doc_ids(self) -> list[str]:
        return list(dict.fromkeys(m.doc_id for m in self.matched))


def normalise_title(title: str) -> str:
    """Lower case ASCII letters and digits separated by single spaces: BibTeX braces, LaTeX commands,
    accents and punctuation do not matter."""
    text = re.sub(r"\\[^a-zA-Z\s]", "", title)  # accents: {\'e}
    text = re.sub(r"\\[a-zA-Z]+\s*", " ", text).replace("{", "").replace("}", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def _first_id(values: Iterable[tuple[str, str]]) -> tuple[str, str]:
    for how, value in values:
        value = value.strip()
        for pattern in (BARE_ID, ARXIV_URL, ARXIV_DOI, ARXIV_PREFIXED):
            m = pattern.fullmatch(value) if pattern is BARE_ID else pattern.search(value)
            if m:
                return m.group(1), how
    return "", ""


def parse_bibtex(text: str) -> list[Entry]:
    import bibtexparser

    log = logging.getLogger("bibtexparser")
    level = log.level
    log.setLevel(logging.CRITICAL)  # a bad block is one line below, not the parser's multi-line warning
    try:
        library = bibtexparser.parse_string(text)
    except Exception as exc:  # noqa: BLE001 - the parser's own errors have no common base
        raise LibraryError(f"the BibTeX cannot be parsed ({type(exc).__name__}); export the library again") from None
    finally:
        log.setLevel(level)
    if library.failed_blocks:
        first = library.failed_blocks[0]
        raise LibraryError(
            f"the BibTeX is not valid near line {(first.start_line or 0) + 1} ({len(library.failed_blocks)} bad "
            "block(s)); fix those entries (a missing comma or brace) or export the library again"
        )
    entries = []
    for e in library.entries:
        f = {k.lower(): str(v.value) for k, v in e.fields_dict.items()}
        candidates: list[tuple[str, str]] = []
        if f.get("eprint") and f.get("archiveprefix", "arxiv").lower() == "arxiv":
            candidates.append(("eprint", f["eprint"]))
        candidates += [("eprint", f[k]) for k in ("arxiv", "arxivid") if f.get(k)]
        candidates += [("doi", f["doi"])] if f.get("doi") else []
        candidates += [("url", f[k]) for k in ("url", "note", "journal", "howpublished") if f.get(k)]
        arxiv_id, how = _first_id(candidates)
        entries.append(Entry(e.key, f.get("title", "").strip("{} "), arxiv_id, how))
    return entries


def parse_csl_json(text: str) -> list[Entry]:
    try:
        data = loads_bounded(text)
    except ValueError as exc:
        raise LibraryError(f"the CSL JSON is not valid JSON ({exc}); export it again from Zotero") from None
    if isinstance(data, Mapping) and isinstance(data.get("items"), list):
        data = data["items"]
    if not isinstance(data, list) or not all(isinstance(x, Mapping) for x in data):
        raise LibraryError("a CSL JSON library is a list of items (Zotero: Export Library... > CSL JSON)")
    entries = []
    for i, item in enumerate(data):
        f = {k: str(v) for k, v in item.items() if isinstance(v, str | int) and v != ""}
        fields = (("eprint", "number"), ("doi", "DOI"), ("url", "URL"), ("url", "note"), ("eprint", "archive_location"))
        arxiv_id, how = _first_id((h, f[k]) for h, k in fields if k in f)
        key = f.get("id") or f.get("citation-key") or f"item{i + 1}"
        entries.append(Entry(key, f.get("title", ""), arxiv_id, how))
    return entries


def read_library(path: Path) -> list[Entry]:
    """Entries of a ``.bib`` or CSL ``.json`` file."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise LibraryError(f"no file {path}; give a .bib or a CSL .json export") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LibraryError(f"cannot read {path} ({type(exc).__name__}); give a UTF-8 .bib or .json file") from None
    suffix = path.suffix.lower()
    if suffix in (".bib", ".bibtex"):
        return parse_bibtex(text)
    if suffix == ".json":
        return parse_csl_json(text)
    raise LibraryError(f"{path.name}: unknown library format; give a BibTeX .bib or a Zotero CSL JSON .json file")


def match_entries(store: Database, entries: list[Entry]) -> LibraryMatch:
    """Match entries to documents of the workspace: explicit ids first, then normalised titles."""
    out = LibraryMatch()
    with_id = [e for e in entries if e.arxiv_id]
    known = set(Documents(store).of([e.arxiv_id for e in with_id]))
    rest: list[Entry] = []
    for e in entries:
        if e.arxiv_id and e.arxiv_id in known:
            out.matched.append(Matched(e, e.arxiv_id, e.how))
        else:
            rest.append(e)
    wanted = {normalise_title(e.title): e for e in rest if normalise_title(e.title)}
    by_title: dict[str, str] = {}
    if wanted:
        for doc_id, title in People(store).document_titles():
            key = normalise_title(title)
            if key in wanted and key not in by_title:
                by_title[key] = doc_id
    for e in rest:
        found = by_title.get(normalise_title(e.title))
        if found:
            out.matched.append(Matched(e, found, "title"))
        else:
            out.unmatched.append(e)
    return out


class EntryRow(msgspec.Struct, frozen=True):
    """An unmatched entry as `radar people import --json` lists it."""

    key: str
    title: str
    arxiv_id: str


def describe(entry: Entry) -> EntryRow:
    return msgspec.convert(entry, EntryRow, from_attributes=True)
