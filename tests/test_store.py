from __future__ import annotations

import sqlite3
from pathlib import Path

import msgspec
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from msgspec.structs import astuple

from radar.crawler.documents import (
    DayCount,
    Document,
    DocumentHash,
    DocumentMeta,
    Documents,
    DocumentText,
    PublishedRange,
    row_intact,
)
from radar.crawler.state import CrawlStates
from radar.index.embeddings import EmbeddedDocument, Embedding, Embeddings, Facet, PendingEmbedding, StoredVector
from radar.index.tags_table import Correction, TagDecision, TagDetails, TaggedDocument, Tags, TagScore
from radar.reports.deliveries import Deliveries, Delivery
from radar.repro.runs_table import Runs
from radar.store import Store, StoreError, Workspace
from radar.store.dates import entered
from radar.store.doctor import salvage
from radar.store.schema import LATEST_VERSION


def paper(
    id_: str = "2501.00001", version: int = 1, title: str = "A title", published: str = "2025-01-02T00:00:00Z", **kw
) -> Document:
    return Document(
        id=id_,
        kind="paper",
        source="arxiv",
        title=title,
        abstract="An abstract.",
        published=published,
        version=version,
        **kw,
    )


def test_init_creates_wal_database_and_commented_config(workspace: Workspace) -> None:
    assert workspace.config_path.read_text().lstrip().startswith("#")
    with workspace.store() as store:
        assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.schema_version == LATEST_VERSION
    for folder in (workspace.index_dir, workspace.reports_dir, workspace.runs_dir):
        assert folder.is_dir()


def test_init_twice_keeps_config_and_data(workspace: Workspace) -> None:
    workspace.config_path.write_text(workspace.config_path.read_text() + "\n# my edit\n")
    with workspace.store() as store:
        Documents(store).upsert([paper()])
    ws2, created = Workspace.init(workspace.root)
    assert not created
    assert "# my edit" in ws2.config_path.read_text()
    with ws2.store() as store:
        assert Documents(store).count() == 1


def test_new_version_replaces_old_in_place_and_keeps_first_seen(workspace: Workspace) -> None:
    with workspace.store() as store:
        assert Documents(store).upsert([paper(version=1)]).added == 1
        first = Documents(store).meta("2501.00001")
        counts = Documents(store).upsert([paper(version=2, title="A better title", published="2025-02-01T00:00:00Z")])
        assert (counts.added, counts.updated) == (0, 1)
        doc = Documents(store).get("2501.00001")
        assert doc.title == "A better title" and doc.version == 2
        # the v1 date stays the paper's date; first_seen is unchanged
        assert doc.published == "2025-01-02T00:00:00Z"
        assert Documents(store).meta("2501.00001").first_seen == first.first_seen
        # an older version arriving late does not overwrite the newer one
        assert Documents(store).upsert([paper(version=1, title="Old")]).unchanged == 1
        assert Documents(store).get("2501.00001").title == "A better title"
        assert Documents(store).count() == 1


def test_same_content_twice_is_unchanged(workspace: Workspace) -> None:
    with workspace.store() as store:
        Documents(store).upsert([paper()])
        counts = Documents(store).upsert([paper(), paper()])
        assert counts.unchanged == 2 and Documents(store).count() == 1


def test_transaction_rolls_back_on_interrupt(workspace: Workspace) -> None:
    with workspace.store() as store:
        Documents(store).upsert([paper("2501.00001")])
        with pytest.raises(KeyboardInterrupt), store.transaction() as conn:
            conn.execute("DELETE FROM documents")
            raise KeyboardInterrupt
        assert Documents(store).count() == 1


def test_database_from_a_newer_radar_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "radar.db"
    Store(db).close()
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {LATEST_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError, match="upgrade research-radar"):
        Store(db)


def test_corrupt_database_gives_one_line_error(tmp_path: Path) -> None:
    db = tmp_path / "radar.db"
    db.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="is damaged .* run `radar doctor`"):
        Store(db)


def test_runs_lifecycle(workspace: Workspace) -> None:
    with workspace.store() as store:
        Runs(store).create_run("r1", "repro", {"method": "dapo"})
        Runs(store).update_run("r1", status="running", progress=0.5, result={"step": 3})
        run = Runs(store).get_run("r1")  # the store returns runs as RunRecords only
        assert run is not None and run.status == "running" and run.method == "dapo" and run.result == {"step": 3}
        with pytest.raises(StoreError, match="not one of"):
            Runs(store).update_run("r1", status="exploded")
        with pytest.raises(StoreError, match="no run"):
            Runs(store).update_run("missing", status="done")
        assert [r.id for r in Runs(store).list_runs(status="running")] == ["r1"]


def test_crawl_state_round_trip(workspace: Workspace) -> None:
    with workspace.store() as store:
        state = CrawlStates(store).get("arxiv")
        assert state.cursor == ""
        state.cursor, state.etag = "2025-01-01T00:00:00Z", '"abc"'
        CrawlStates(store).save(state)
        again = CrawlStates(store).get("arxiv")
        assert (again.cursor, again.etag) == ("2025-01-01T00:00:00Z", '"abc"')


def test_atomic_write_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "file.txt"
    Workspace.write_text_atomic(target, "one")
    Workspace.write_text_atomic(target, "two")
    assert target.read_text() == "two"
    assert [p.name for p in target.parent.iterdir()] == ["file.txt"]


text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200)
documents = st.builds(
    Document,
    id=st.from_regex(r"2[0-9]{3}\.[0-9]{5}", fullmatch=True),
    kind=st.sampled_from(["paper", "post"]),
    source=st.sampled_from(["arxiv", "feed-a"]),
    title=text,
    abstract=text,
    published=st.datetimes().map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ")),
    updated=st.just("2026-01-01T00:00:00Z"),
    authors=st.lists(text, max_size=4).map(tuple),
    categories=st.lists(st.sampled_from(["cs.LG", "cs.CL", "cs.DC"]), max_size=3).map(tuple),
    primary_category=st.sampled_from(["", "cs.LG"]),
    url=st.just("https://arxiv.org/abs/x"),
    version=st.integers(0, 9),
    date_estimated=st.booleans(),
    extra=st.dictionaries(st.sampled_from(["doi", "comment"]), text, max_size=2),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=documents)
def test_store_round_trip(workspace: Workspace, doc: Document) -> None:
    with workspace.store() as store:
        store.conn.execute("DELETE FROM documents")
        Documents(store).upsert([doc])
        back = Documents(store).get(doc.id)
        assert back == doc
        assert back.extra == doc.extra
        # the named rows other stages read carry the same values
        meta = Documents(store).meta(doc.id)
        assert isinstance(meta, DocumentMeta)
        assert (meta.doc_id, meta.content_hash, meta.version) == (doc.id, doc.content_hash, doc.version)
        [text] = Documents(store).text_rows("")
        assert isinstance(text, DocumentText)
        assert msgspec.structs.replace(text, categories="") == DocumentText(
            doc.id,
            doc.published,
            doc.source,
            doc.primary_category,
            "",
            doc.content_hash,
            doc.title,
            doc.abstract,
            meta.changed_at,
        )
        assert tuple(orjson.loads(text.categories)) == doc.categories
        assert Documents(store).content_hashes_since("") == [DocumentHash(doc.id, doc.content_hash)]
        day = entered(doc.id, doc.published)  # the day it entered the record (store.dates)
        assert Documents(store).published_range() == PublishedRange(day, day)
        assert Documents(store).counts_by_day() == [DayCount(day[:10], doc.kind, 1)]


def test_migrations_upgrade_an_existing_database_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import radar.store.db as db_module

    db = tmp_path / "radar.db"
    with Store(db) as store:
        Documents(store).upsert([paper()])
    extra = (LATEST_VERSION + 1, "ALTER TABLE documents ADD COLUMN note TEXT NOT NULL DEFAULT ''")
    monkeypatch.setattr(db_module, "MIGRATIONS", [*db_module.MIGRATIONS, extra])
    monkeypatch.setattr(db_module, "LATEST_VERSION", LATEST_VERSION + 1)
    with Store(db) as store:
        assert store.schema_version == LATEST_VERSION + 1
        assert Documents(store).count() == 1
        assert store.conn.execute("SELECT note FROM documents").fetchone()[0] == ""


def test_the_doctor_skips_a_document_whose_text_no_longer_matches_its_hash(tmp_path: Path) -> None:
    """The kernel salvages rows without knowing a document; the crawler's check (the content hash) finds one whose
    title was altered behind the store's back."""
    db = tmp_path / "radar.db"
    with Store(db) as store:
        Documents(store).upsert([paper("2501.00001"), paper("2501.00002")])
        store.conn.execute("UPDATE documents SET title = 'flipped' WHERE id = '2501.00001'")
    checked = salvage(db, checks={"documents": row_intact}).tables["documents"]
    assert (checked.rows, checked.altered) == (1, 1)
    assert salvage(db).tables["documents"].rows == 2  # no check given: every readable row is kept


def test_the_store_is_the_kernel_and_holds_no_stage_table() -> None:
    """Store keeps the connection, transactions and migrations and composes no table: each stage reads its tables
    through a repository of its own (documents: crawler.documents, embeddings and tags: index, ...)."""
    assert Store.__bases__ == (object,)
    assert {"transaction", "_migrate"} <= set(vars(Store))
    moved = {"upsert_documents", "documents", "current_vectors", "save_embeddings", "tags_of", "save_tag_decisions"}
    assert moved.isdisjoint(dir(Store))


vectors = st.binary(min_size=8, max_size=8)


@settings(max_examples=30, deadline=None)
@given(docs=st.lists(documents, min_size=1, max_size=5, unique_by=lambda d: d.id), data=st.data())
def test_embeddings_round_trip(docs: list[Document], data: st.DataObject) -> None:
    with Store(Path(":memory:")) as store:
        Documents(store).upsert(docs)
        embeddings = Embeddings(store)
        pending = embeddings.pending("m")
        assert all(isinstance(p, PendingEmbedding) for p in pending)
        assert {p.doc_id: (p.content_hash, p.title, p.abstract) for p in pending} == {
            d.id: (d.content_hash, d.title, d.abstract) for d in docs
        }
        saved = {d.id: data.draw(vectors) for d in docs}
        embeddings.save(Embedding(p.doc_id, "m", p.content_hash, saved[p.doc_id]) for p in pending)
        assert embeddings.pending("m") == [] and embeddings.count_unembedded("m") == 0
        assert embeddings.current_vectors([d.id for d in docs], "m") == saved
        vec_ids = embeddings.vec_ids_of(saved)
        for doc_id, vector in saved.items():
            assert embeddings.vector_of(doc_id, "m") == StoredVector(vec_ids[doc_id], vector)
        assert [v for batch in embeddings.iter_vectors("m") for v in batch] == sorted(
            (StoredVector(vec_ids[i], v) for i, v in saved.items()), key=lambda v: v.vec_id
        )
        assert embeddings.doc_ids_for_vectors(vec_ids.values()) == {v: i for i, v in vec_ids.items()}
        assert sorted(embeddings.facets(), key=lambda f: f.doc_id) == sorted(
            (Facet(d.id, entered(d.id, d.published), d.source, d.kind, vec_ids[d.id]) for d in docs),
            key=lambda f: f.doc_id,
        )
        rows = Embeddings(store).sample_embedded("m", len(docs))
        assert all(isinstance(r, EmbeddedDocument) for r in rows)
        assert {r.doc_id: (r.title, r.abstract, r.vector) for r in rows} == {
            d.id: (d.title, d.abstract, saved[d.id]) for d in docs
        }
        assert embeddings.models() == {"m": len(docs)}


tag_names = st.sampled_from(["rl", "kernels", "inference"])


@settings(max_examples=40, deadline=None)
@given(
    decisions=st.lists(
        st.tuples(st.sampled_from(["2501.00001", "2501.00002"]), tag_names, st.floats(0, 1)), max_size=6
    ).map(lambda xs: list({(d, t): (d, t, s) for d, t, s in xs}.values())),
    fixes=st.lists(st.tuples(st.sampled_from(["2501.00001", "2501.00002"]), tag_names, st.booleans()), max_size=4),
)
def test_tags_and_corrections_round_trip(
    decisions: list[tuple[str, str, float]], fixes: list[tuple[str, str, bool]]
) -> None:
    ids = ["2501.00001", "2501.00002"]
    with Store(Path(":memory:")) as store:
        Documents(store).upsert([paper(i) for i in ids])
        Tags(store).save_decisions("v1", ids, [TagDecision(d, t, s, "model") for d, t, s in decisions])
        for doc_id, tag, add in fixes:
            Tags(store).save_correction(doc_id, [tag] if add else [], [] if add else [tag])
        last = {(d, t): add for d, t, add in fixes}  # a later correction of the same tag replaces the earlier
        assert sorted(Tags(store).corrections(), key=astuple) == sorted(
            (Correction(d, t, add) for (d, t), add in last.items()), key=astuple
        )
        expected: dict[str, dict[str, TagScore]] = {i: {} for i in ids}
        for d, t, s in decisions:
            expected[d][t] = TagScore(t, s, "model")
        for (d, t), add in last.items():
            if add:
                expected[d][t] = TagScore(t, 1.0, "user")
            else:
                expected[d].pop(t, None)
        for doc_id in ids:
            details = Tags(store).details(doc_id)
            assert isinstance(details, TagDetails)
            assert sorted(details.tags, key=astuple) == sorted(expected[doc_id].values(), key=astuple)
            assert details.corrections == {t: int(add) for (d, t), add in last.items() if d == doc_id}
        assert sorted(Tags(store).tagged_in("", "~"), key=astuple) == sorted(
            (TaggedDocument(d, "2025-01-02", t) for d in ids for t in expected[d]), key=astuple
        )
        assert Tags(store).of(ids) == {d: sorted(tags) for d, tags in expected.items() if tags}


@settings(max_examples=30, deadline=None)
@given(attempts=st.lists(st.booleans(), min_size=1, max_size=5))
def test_delivery_round_trip(attempts: list[bool]) -> None:
    with Store(Path(":memory:")) as store:
        for ok in attempts:
            Deliveries(store).record("2025-W20", "email", "a@lab.example", ok=ok, error="" if ok else "refused")
        row = Deliveries(store).get("2025-W20", "email", "a@lab.example")
        assert isinstance(row, Delivery)
        assert (row.period, row.channel, row.recipient) == ("2025-W20", "email", "a@lab.example")
        assert row.attempts == len(attempts)
        assert row.status == ("sent" if any(attempts) else "failed")  # a sent delivery stays sent
        assert bool(row.sent_at) == any(attempts)
        assert row.last_error == ("" if attempts[-1] else "refused")
        assert Deliveries(store).find(period="2025-W20") == [row] and Deliveries(store).find(status="other") == []
        assert Deliveries(store).get("2025-W21", "email", "a@lab.example") is None


def test_a_retag_with_as_many_rows_changes_the_tags_fingerprint() -> None:
    """save_tag_decisions deletes and inserts: a retag writing as many rows reuses the rowids, so the count and the
    last rowid stay as they were; the fingerprint still changes (the trends' tag series and method cards are kept
    under it)."""
    with Store(Path(":memory:")) as store:
        Documents(store).upsert([paper("2501.00001"), paper("2501.00002")])
        Tags(store).save_decisions("v1", ["2501.00001"], [TagDecision("2501.00001", "rl", 0.9, "model")])
        before = Tags(store).fingerprint()
        Tags(store).save_decisions("v1", ["2501.00001"], [TagDecision("2501.00001", "vision", 0.9, "model")])
        assert Tags(store).of(["2501.00001"]) == {"2501.00001": ["vision"]}
        assert Tags(store).fingerprint() != before
        before = Tags(store).fingerprint()
        Tags(store).save_correction("2501.00002", ["rl"], [])
        assert Tags(store).fingerprint() != before


def test_every_contributions_write_changes_their_fingerprint() -> None:
    """A rewritten ``changes`` line of the same length, and a paper's contribution decided again, change it."""
    from radar.analysis.contributions.table import ContributionRow, Contributions, Mention

    def row(name: str) -> ContributionRow:
        return ContributionRow(
            "2501.00001", "h", "m1", True, name, name.lower(), (), "method", "rl", (), "changes", "", (), 0.9, 0.8
        )

    with Store(Path(":memory:")) as store:
        Documents(store).upsert([paper("2501.00001")])
        table = Contributions(store)
        table.write_contributions([row("ZorPO")], [Mention("2501.00001", "grpo", True)])
        seen = {table.contributions_fingerprint()}
        table.set_rewritten_changes({"2501.00001": "aaaa"})
        seen.add(table.contributions_fingerprint())
        table.set_rewritten_changes({"2501.00001": "bbbb"})
        seen.add(table.contributions_fingerprint())
        table.write_contributions([row("BarPO")], [Mention("2501.00001", "ppo", True)])
        seen.add(table.contributions_fingerprint())
        assert len(seen) == 4


def test_the_kernels_generic_table_reads_records_chunks_in_queries_and_upserts_by_key() -> None:
    """store.table: a repository's rows become records by msgspec, an IN query takes any number of ids (900 a
    statement), an upsert updates the row's other columns but those it keeps, and meta values are written once."""
    from radar.store.table import Repository, chunks, set_meta, upsert_sql

    class Pair(msgspec.Struct, frozen=True, array_like=True):
        key: str
        n: int

    with Store(Path(":memory:")) as store:
        store.conn.execute("CREATE TABLE t (key TEXT, part INTEGER, n INTEGER, first TEXT, PRIMARY KEY (key, part))")
        put = upsert_sql("t", ("key", "part", "n", "first"), "key, part", keep=("first",))
        store.conn.executemany(put, [(f"k{i:05d}", 0, i, "then") for i in range(40000)])
        store.conn.execute(put, ("k00001", 0, 99, "now"))  # taken: n updated, first kept
        store.conn.execute(put, ("k00001", 1, 7, "now"))  # another key
        table = Repository(store)
        assert table.conn is store.conn
        rows = table.records(Pair, "SELECT key, n FROM t WHERE part = ? ORDER BY key", (0,))
        assert len(rows) == 40000 and rows[1] == Pair("k00001", 99)
        assert table.tuples("SELECT part, first FROM t WHERE key = 'k00001'").fetchall() == [(0, "then"), (1, "now")]
        store.conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 999)  # an SQLite built with the old default
        ids = [f"k{i:05d}" for i in range(0, 40000, 2)]  # more than that takes in one statement
        found = [r[0] for r in table.rows_for("SELECT key FROM t WHERE part = ? AND key IN ({marks})", ids, 0)]
        assert sorted(found) == ids
        assert table.meta_value("state") == ""
        with store.transaction() as conn:
            set_meta(conn, "state", "a")
            set_meta(conn, "state", "b")
        assert table.meta_value("state") == "b"
    assert [len(c) for c in chunks(range(2000))] == [900, 900, 200] and list(chunks([])) == []
