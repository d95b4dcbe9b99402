from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from radar.crawler.documents import Documents
from radar.crawler.snapshot import record_to_document
from radar.store import Workspace
from tests.cli_helpers import run_cli


def _count_lines(path: Path) -> int:
    with gzip.open(path, "rb") as fh:
        return sum(1 for _ in fh)


def test_import_is_idempotent(workspace: Workspace, small_snapshot: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = str(workspace.root)
    first = run_cli(capsys, "--workspace", ws, "import", str(small_snapshot), "--json")
    assert first.code == 0, first.err
    assert first.json()["added"] == _count_lines(small_snapshot) == 500
    second = run_cli(capsys, "--workspace", ws, "import", str(small_snapshot), "--json").json()
    assert (second["added"], second["updated"], second["unchanged"]) == (0, 0, 500)
    stats = run_cli(capsys, "--workspace", ws, "stats", "--json").json()
    assert stats["documents"] == 500
    assert set(stats) >= {"documents", "by_source", "by_kind", "by_month"}
    assert sum(stats["by_month"].values()) == 500 and stats["by_kind"] == {"paper": 500}


def test_truncated_gzip_keeps_what_was_read(
    workspace: Workspace, small_snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = small_snapshot.read_bytes()
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(data[: len(data) * 2 // 3])
    res = run_cli(capsys, "--workspace", str(workspace.root), "import", str(cut))
    assert res.code == 2
    assert "truncated or corrupt" in res.err and "import it again" in res.err
    assert "Traceback" not in res.err
    with workspace.store() as store:
        kept = Documents(store).count()
    assert 0 < kept < 500
    # the full file afterwards completes the set without duplicates
    assert run_cli(capsys, "--workspace", str(workspace.root), "import", str(small_snapshot)).code == 0
    with workspace.store() as store:
        assert Documents(store).count() == 500


def test_bad_lines_are_reported_and_good_lines_kept(
    workspace: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = {
        "id": "2501.00001",
        "title": "T",
        "abstract": "A",
        "authors": [],
        "categories": ["cs.LG"],
        "primary_category": "cs.LG",
        "published": "2025-01-01",
    }
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps(good),
                "{not json",
                json.dumps({**good, "id": "2501.00002"}),
                json.dumps({**good, "id": "not-an-id"}),
                "",
            ]
        )
    )
    res = run_cli(capsys, "--workspace", str(workspace.root), "import", str(path))
    assert res.code == 2
    assert "skipped 2 bad line(s)" in res.err and "line 2, not valid JSON" in res.err
    with workspace.store() as store:
        assert Documents(store).count() == 2


def test_missing_file_is_an_input_error(workspace: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    res = run_cli(capsys, "--workspace", str(workspace.root), "import", "/nonexistent/file.jsonl.gz")
    assert res.code == 1 and "not found" in res.err and len(res.err.strip().splitlines()) == 1


def test_record_versions_and_sources() -> None:
    doc = record_to_document(
        {"id": "2401.00001v3", "title": " A  title ", "published": "2024-01-05", "source_repo": "owner/arxiver"}
    )
    assert (doc.id, doc.version, doc.title, doc.source) == ("2401.00001", 3, "A title", "snapshot/arxiver")
    assert doc.published == "2024-01-05T00:00:00Z"
    legacy = record_to_document({"id": "hep-th/9901001", "title": "Old", "published": "1999-01-01"})
    assert legacy.id == "hep-th/9901001"
    with pytest.raises(ValueError, match="missing field"):
        record_to_document({"id": "2401.00001"})


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    title=st.text(min_size=1, max_size=80).filter(lambda t: _plain(t)),
    abstract=st.text(max_size=200),
    authors=st.lists(st.text(max_size=20), max_size=3),
)
def test_import_export_round_trip(workspace: Workspace, title: str, abstract: str, authors: list[str]) -> None:
    rec = {
        "id": "2502.12345",
        "title": title,
        "abstract": abstract,
        "authors": authors,
        "categories": ["cs.CL"],
        "primary_category": "cs.CL",
        "published": "2025-02-03",
    }
    with workspace.store() as store:
        store.conn.execute("DELETE FROM documents")
        Documents(store).upsert([record_to_document(rec)])
        back = Documents(store).get("2502.12345")
    assert back.title == _plain(title) and back.abstract == _plain(abstract)
    assert list(back.authors) == [_plain(a) for a in authors]


def _plain(text: str) -> str:
    """What import keeps of a text: control characters dropped, whitespace collapsed."""
    return " ".join(re.sub(r"[\x00-\x1f\x7f-\x9f]", " ", text).split())
