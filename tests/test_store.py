from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from radar.store import Document, Store, StoreError, Workspace
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
        store.upsert_documents([paper()])
    ws2, created = Workspace.init(workspace.root)
    assert not created
    assert "# my edit" in ws2.config_path.read_text()
    with ws2.store() as store:
        assert store.count_documents() == 1


def test_new_version_replaces_old_in_place_and_keeps_first_seen(workspace: Workspace) -> None:
    with workspace.store() as store:
        assert store.upsert_documents([paper(version=1)]).added == 1
        first = store.document_meta("2501.00001")
        counts = store.upsert_documents([paper(version=2, title="A better title", published="2025-02-01T00:00:00Z")])
        assert (counts.added, counts.updated) == (0, 1)
        doc = store.get_document("2501.00001")
        assert doc.title == "A better title" and doc.version == 2
        # the v1 date stays the paper's date; first_seen is unchanged
        assert doc.published == "2025-01-02T00:00:00Z"
        assert store.document_meta("2501.00001")["first_seen"] == first["first_seen"]
        # an older version arriving late does not overwrite the newer one
        assert store.upsert_documents([paper(version=1, title="Old")]).unchanged == 1
        assert store.get_document("2501.00001").title == "A better title"
        assert store.count_documents() == 1


def test_same_content_twice_is_unchanged(workspace: Workspace) -> None:
    with workspace.store() as store:
        store.upsert_documents([paper()])
        counts = store.upsert_documents([paper(), paper()])
        assert counts.unchanged == 2 and store.count_documents() == 1


def test_transaction_rolls_back_on_interrupt(workspace: Workspace) -> None:
    with workspace.store() as store:
        store.upsert_documents([paper("2501.00001")])
        with pytest.raises(KeyboardInterrupt), store.transaction() as conn:
            conn.execute("DELETE FROM documents")
            raise KeyboardInterrupt
        assert store.count_documents() == 1


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
    with pytest.raises(StoreError, match="restore it from a backup"):
        Store(db)


def test_runs_lifecycle(workspace: Workspace) -> None:
    with workspace.store() as store:
        store.create_run("r1", "repro", {"method": "dapo"})
        store.update_run("r1", status="running", progress=0.5, result={"step": 3})
        run = store.get_run("r1")
        assert run["status"] == "running" and run["params"]["method"] == "dapo" and run["result"] == {"step": 3}
        with pytest.raises(StoreError, match="not one of"):
            store.update_run("r1", status="exploded")
        with pytest.raises(StoreError, match="no run"):
            store.update_run("missing", status="done")
        assert [r["id"] for r in store.list_runs(status="running")] == ["r1"]


def test_crawl_state_round_trip(workspace: Workspace) -> None:
    with workspace.store() as store:
        state = store.crawl_state("arxiv")
        assert state.cursor == ""
        state.cursor, state.etag = "2025-01-01T00:00:00Z", '"abc"'
        store.save_crawl_state(state)
        again = store.crawl_state("arxiv")
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
        store.upsert_documents([doc])
        back = store.get_document(doc.id)
        assert back == doc
        assert back.extra == doc.extra


def test_migrations_upgrade_an_existing_database_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import radar.store.db as db_module

    db = tmp_path / "radar.db"
    with Store(db) as store:
        store.upsert_documents([paper()])
    extra = (LATEST_VERSION + 1, "ALTER TABLE documents ADD COLUMN note TEXT NOT NULL DEFAULT ''")
    monkeypatch.setattr(db_module, "MIGRATIONS", [*db_module.MIGRATIONS, extra])
    monkeypatch.setattr(db_module, "LATEST_VERSION", LATEST_VERSION + 1)
    with Store(db) as store:
        assert store.schema_version == LATEST_VERSION + 1
        assert store.count_documents() == 1
        assert store.conn.execute("SELECT note FROM documents").fetchone()[0] == ""
