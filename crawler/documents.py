"""The crawler's repository: the documents table (papers and posts), their upsert rule, filters, and the counts the
dashboard and reports read. The crawler writes documents; every later stage reads them through this module.

The table's schema stays with the workspace's migrations (store/schema.py); ``Document`` and the named rows below
are the records, read by field (``row.content_hash``), a ``store.table.Repository`` on the store's connection; the
small rows are converted by msgspec (array-like Structs take a row's columns in order).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec
import orjson

from radar.store.dates import entered_sql
from radar.store.models import UpsertCounts, utc_now
from radar.store.table import CONTRIBUTION_WRITES, EMBEDDINGS_GENERATION, TAG_WRITES, Repository, bump_counter

ENTERED = entered_sql("d")


@dataclass(frozen=True, slots=True)
class Document:
    """A paper or a post. ``id`` is the bare arXiv id for papers, ``post:<hash>`` for posts."""

    id: str
    kind: str
    source: str
    title: str
    abstract: str
    published: str
    updated: str = ""
    authors: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    primary_category: str = ""
    url: str = ""
    version: int = 0
    date_estimated: bool = False
    extra: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def content_hash(self) -> str:
        text = "\x1e".join((self.title, self.abstract, "\x1f".join(self.authors), "\x1f".join(self.categories)))
        return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


@dataclass(frozen=True, slots=True)
class DocumentMeta:
    """Bookkeeping of one stored document (not part of its content)."""

    doc_id: str
    first_seen: str
    changed_at: str
    content_hash: str
    version: int


class DocumentText(msgspec.Struct, frozen=True, array_like=True):
    """What the trends term cache reads of a document; ``categories`` is the stored JSON list."""

    doc_id: str
    published: str
    source: str
    primary_category: str
    categories: str
    content_hash: str
    title: str
    abstract: str
    changed_at: str


class DocumentHash(msgspec.Struct, frozen=True, array_like=True):
    doc_id: str
    content_hash: str


class PublishedRange(msgspec.Struct, frozen=True, array_like=True):
    """First and last publication stamps ('' when there is no document)."""

    first: str
    last: str


class DayCount(msgspec.Struct, frozen=True, array_like=True):
    day: str  # YYYY-MM-DD
    kind: str
    documents: int


class DocumentStats(msgspec.Struct, frozen=True):
    """What `radar stats` shows (and prints with --json): documents, by source, kind and month published."""

    documents: int
    by_source: dict[str, int]
    by_kind: dict[str, int]
    by_month: dict[str, int]  # YYYY-MM -> documents


_DOC_COLUMNS = (
    "id, kind, source, title, abstract, authors, categories, primary_category, published, updated, "
    "url, version, date_estimated, content_hash, first_seen, changed_at, extra"
)

# Insert a new document, or replace an existing one when the incoming version is not older and the
# content changed. first_seen and source are kept; published keeps the earliest date seen
# (an arXiv v2 announcement must not move a paper's v1 date).
_UPSERT_SQL = f"""
INSERT INTO documents ({_DOC_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(id) DO UPDATE SET
    title = excluded.title,
    abstract = excluded.abstract,
    authors = CASE WHEN excluded.authors != '[]' THEN excluded.authors ELSE documents.authors END,
    categories = excluded.categories,
    primary_category = excluded.primary_category,
    published = CASE WHEN documents.date_estimated = 0 AND documents.published < excluded.published
                     THEN documents.published ELSE excluded.published END,
    date_estimated = CASE WHEN documents.date_estimated = 0 AND documents.published < excluded.published
                     THEN 0 ELSE excluded.date_estimated END,
    updated = excluded.updated,
    url = CASE WHEN excluded.url != '' THEN excluded.url ELSE documents.url END,
    version = MAX(documents.version, excluded.version),
    content_hash = excluded.content_hash,
    changed_at = excluded.changed_at,
    extra = excluded.extra
WHERE excluded.version >= documents.version AND excluded.content_hash != documents.content_hash
"""


def _doc_row(doc: Document, now: str) -> tuple[Any, ...]:
    return (
        doc.id,
        doc.kind,
        doc.source,
        doc.title,
        doc.abstract,
        orjson.dumps(list(doc.authors)).decode(),
        orjson.dumps(list(doc.categories)).decode(),
        doc.primary_category,
        doc.published,
        doc.updated or doc.published,
        doc.url,
        doc.version,
        int(doc.date_estimated),
        doc.content_hash,
        now,
        now,
        orjson.dumps(doc.extra).decode(),
    )


class _Row(Protocol):
    """A documents row by column name: an ``sqlite3.Row``, or the doctor's columns zipped with a raw row."""

    def __getitem__(self, key: str, /) -> Any: ...


def _row_doc(row: _Row) -> Document:
    return Document(
        id=row["id"],
        kind=row["kind"],
        source=row["source"],
        title=row["title"],
        abstract=row["abstract"],
        published=row["published"],
        updated=row["updated"],
        authors=tuple(orjson.loads(row["authors"])),
        categories=tuple(orjson.loads(row["categories"])),
        primary_category=row["primary_category"],
        url=row["url"],
        version=row["version"],
        date_estimated=bool(row["date_estimated"]),
        extra=orjson.loads(row["extra"]),
    )


def row_intact(columns: Sequence[str], row: Sequence[object]) -> bool:
    """Whether a documents row (its ``columns``' values) still hashes to its content_hash: its title, abstract,
    authors and categories unaltered (the doctor's check of a damaged database)."""
    values = dict(zip(columns, row, strict=True))
    try:
        return _row_doc(values).content_hash == values["content_hash"]
    except (ValueError, TypeError, KeyError):  # JSON that no longer parses, a missing column
        return False


class Documents(Repository):
    """Documents on ``db``: upsert, read by id or filter, and aggregate counts."""

    def upsert(self, docs: Iterable[Document]) -> UpsertCounts:
        """Insert or update documents in one transaction; returns added/updated/unchanged counts."""
        now = utc_now()
        rows = [_doc_row(d, now) for d in docs]
        if not rows:
            return UpsertCounts()
        with self.db.transaction() as conn:
            # new rows get rowids above the current maximum: counting them is a cheap range scan
            max_rowid = conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM documents").fetchone()[0]
            before_changes = conn.total_changes
            conn.executemany(_UPSERT_SQL, rows)
            changed = conn.total_changes - before_changes
            added = conn.execute("SELECT COUNT(*) FROM documents WHERE rowid > ?", (max_rowid,)).fetchone()[0]
        return UpsertCounts(added=added, updated=changed - added, unchanged=len(rows) - changed)

    def delete(self, ids: Iterable[str]) -> list[str]:
        """Remove documents and what derives from them (embeddings, tags, corrections and tag state go by
        ON DELETE CASCADE) in one transaction; the embeddings generation moves, so a saved vector index is
        rebuilt without them, and the fingerprint changes, so keyword and term indexes are. Returns the ids
        that were there."""
        found = [r[0] for r in self.rows_for("SELECT id FROM documents WHERE id IN ({marks})", dict.fromkeys(ids))]
        if found:
            with self.db.transaction() as conn:
                conn.executemany("DELETE FROM documents WHERE id = ?", [(i,) for i in found])
                # the vectors, tags and contributions went by ON DELETE CASCADE
                for counter in (EMBEDDINGS_GENERATION, TAG_WRITES, CONTRIBUTION_WRITES):
                    bump_counter(conn, counter)
        return found

    def get(self, doc_id: str) -> Document | None:
        row = self.conn.execute(f"SELECT {_DOC_COLUMNS} FROM documents WHERE id = ?", (doc_id,)).fetchone()
        return _row_doc(row) if row else None

    def meta(self, doc_id: str) -> DocumentMeta | None:
        row = self.conn.execute(
            "SELECT id, first_seen, changed_at, content_hash, version FROM documents WHERE id = ?", (doc_id,)
        ).fetchone()
        return DocumentMeta(*row) if row else None

    def scan(self, *, since: str = "", until: str = "", kind: str = "", batch: int = 5000) -> Iterator[Document]:
        clauses, params = self._filter_sql(since, until, (), (), (), (kind,) if kind else ())
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        cur = self.conn.execute(f"SELECT {_DOC_COLUMNS} FROM documents d {where} ORDER BY published, id", params)
        while rows := cur.fetchmany(batch):
            yield from (_row_doc(r) for r in rows)

    def count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0])

    def of(self, ids: Iterable[str]) -> dict[str, Document]:
        return {
            r["id"]: _row_doc(r)
            for r in self.rows_for(f"SELECT {_DOC_COLUMNS} FROM documents WHERE id IN ({{marks}})", ids)
        }

    def latest(
        self,
        *,
        since: str = "",
        until: str = "",
        tags: Iterable[str] = (),
        sources: Iterable[str] = (),
        categories: Iterable[str] = (),
        kinds: Iterable[str] = (),
        limit: int = 50,
    ) -> list[Document]:
        """The newest documents matching every given filter (tags: any of them)."""
        clauses, params = self._filter_sql(since, until, tags, sources, categories, kinds)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = self.conn.execute(
            f"SELECT {_DOC_COLUMNS} FROM documents d {where} ORDER BY published DESC, id DESC LIMIT ?", [*params, limit]
        )
        return [_row_doc(r) for r in rows]

    def matching(
        self,
        *,
        since: str = "",
        until: str = "",
        tags: Iterable[str] = (),
        sources: Iterable[str] = (),
        categories: Iterable[str] = (),
        kinds: Iterable[str] = (),
    ) -> list[str]:
        """Ids of documents matching every given filter (tags: any of them)."""
        clauses, params = self._filter_sql(since, until, tags, sources, categories, kinds)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        return [r[0] for r in self.conn.execute(f"SELECT d.id FROM documents d {where}", params)]

    @staticmethod
    def _filter_sql(
        since: str,
        until: str,
        tags: Iterable[str],
        sources: Iterable[str],
        categories: Iterable[str],
        kinds: Iterable[str],
    ) -> tuple[list[str], list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        # the day a document entered the record (store.dates): a paper held in moderation counts when announced;
        # entered >= published, so the plain bound on published keeps the index range scan for ``until``
        if since:
            clauses.append(f"{ENTERED} >= ?")
            params.append(since)
        if until:
            clauses.append(f"d.published <= ? AND {ENTERED} <= ?")
            params.extend((until, until))
        for column, values in (("d.source", list(sources)), ("d.kind", list(kinds))):
            if values:
                clauses.append(f"{column} IN ({','.join('?' * len(values))})")
                params.extend(values)
        cats = list(categories)
        if cats:
            clauses.append(
                f"EXISTS (SELECT 1 FROM json_each(d.categories) c WHERE c.value IN ({','.join('?' * len(cats))}))"
            )
            params.extend(cats)
        tag_list = list(tags)
        if tag_list:
            clauses.append(
                "EXISTS (SELECT 1 FROM document_tags t WHERE t.doc_id = d.id AND t.tag IN "
                f"({','.join('?' * len(tag_list))}))"
            )
            params.extend(tag_list)
        return clauses, params

    def fingerprint(self) -> str:
        """Changes whenever a document is added or its content changes (for derived indexes)."""
        row = self.conn.execute(
            "SELECT COUNT(*), COALESCE(MAX(rowid), 0), COALESCE(MAX(changed_at), '') FROM documents"
        ).fetchone()
        return f"{row[0]}:{row[1]}:{row[2]}"

    def text_rows(self, changed_since: str = "", batch: int = 5000) -> Iterator[DocumentText]:
        """The text of every document changed at or after ``changed_since`` (all of them when empty)."""
        cur = self.tuples(
            "SELECT id, published, source, primary_category, categories, content_hash, title, abstract, changed_at "
            "FROM documents WHERE changed_at >= ?",
            (changed_since,),
        )
        while rows := cur.fetchmany(batch):
            yield from msgspec.convert(rows, list[DocumentText])

    def content_hashes(self, ids: Iterable[str]) -> dict[str, str]:
        """The content hash of each of ``ids`` that is stored."""
        return {r[0]: r[1] for r in self.rows_for("SELECT id, content_hash FROM documents WHERE id IN ({marks})", ids)}

    def content_hashes_since(self, changed_since: str) -> list[DocumentHash]:
        """Content hashes of documents changed at or after ``changed_since``, sorted by id."""
        return self.records(
            DocumentHash, "SELECT id, content_hash FROM documents WHERE changed_at >= ? ORDER BY id", (changed_since,)
        )

    def stats(self) -> DocumentStats:
        q = self.conn.execute
        return DocumentStats(
            documents=self.count(),
            by_source={r[0]: r[1] for r in q("SELECT source, COUNT(*) FROM documents GROUP BY source ORDER BY source")},
            by_kind={r[0]: r[1] for r in q("SELECT kind, COUNT(*) FROM documents GROUP BY kind ORDER BY kind")},
            by_month={
                r[0]: r[1] for r in q("SELECT substr(published, 1, 7), COUNT(*) FROM documents GROUP BY 1 ORDER BY 1")
            },
        )

    def published_range(self, kind: str = "") -> PublishedRange:
        """(first, last) stamps of the day documents entered the record (store.dates), of one kind if given
        ('' when none)."""
        where = "WHERE d.kind = ?" if kind else ""
        params = [kind, kind] if kind else []
        row = self.conn.execute(
            f"SELECT (SELECT MIN({ENTERED}) FROM documents d {where}), "
            f"(SELECT MAX({ENTERED}) FROM documents d {where})",
            params,
        ).fetchone()
        return PublishedRange(row[0] or "", row[1] or "")

    def primary_categories(self) -> dict[str, int]:
        rows = self.conn.execute(
            "SELECT primary_category, COUNT(*) FROM documents WHERE primary_category != '' GROUP BY 1 ORDER BY 2 DESC"
        )
        return {r[0]: r[1] for r in rows}

    def counts_by_kind(self, since: str = "", until: str = "", tagged: bool = False) -> dict[str, int]:
        """Documents per kind published in [since, until] (index range scan); tagged: only tagged ones."""
        clauses, params = self._filter_sql(since, until, (), (), (), ())
        if tagged:
            clauses.append("EXISTS (SELECT 1 FROM document_tags t WHERE t.doc_id = d.id)")
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = self.conn.execute(f"SELECT d.kind, COUNT(*) FROM documents d {where} GROUP BY 1", params)
        return {r[0]: r[1] for r in rows}

    def counts_by_day(self, since: str = "", until: str = "") -> list[DayCount]:
        """Documents per (YYYY-MM-DD, kind) published in [since, until] (no bound when '')."""
        clauses, params = self._filter_sql(since, until, (), (), (), ())
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        sql = f"SELECT substr({ENTERED}, 1, 10), d.kind, COUNT(*) FROM documents d {where} GROUP BY 1, 2"
        return self.records(DayCount, sql, params)
