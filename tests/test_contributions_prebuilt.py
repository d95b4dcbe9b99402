"""The contributions shipped beside the bundled snapshot: they are what the shipped model decides, `radar import`
stores them only where the model and the text still match, and a stale or broken file is one line and changes
nothing (every paper is then decided as usual)."""

from __future__ import annotations

import gzip
import random
from dataclasses import replace
from pathlib import Path

import orjson
import pytest

from radar.analysis.contributions import prebuilt
from radar.analysis.contributions.model import shipped_model
from radar.analysis.contributions.table import Contributions
from radar.analysis.contributions.update import _decided
from radar.app.cli import main
from radar.crawler.documents import Documents
from radar.crawler.snapshot import record_to_document
from radar.store import Workspace
from tests.conftest import snapshot_cut

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "data" / "snapshot.jsonl.gz"
SHIPPED = prebuilt.beside(SNAPSHOT)


def ordered(mentions: object) -> list[tuple[str, bool, str]]:
    return sorted((m.key, m.compared, m.expansion) for m in mentions)  # type: ignore[attr-defined]


def table(ws: Workspace) -> tuple[dict[str, tuple[object, ...]], dict[str, list[tuple[str, bool, str]]]]:
    """Every stored contribution (its fields but the time it was computed) and every paper's mentions."""
    with ws.store() as store:
        ids = Contributions(store).papers_without_contribution("")  # every stored paper
        rows = {
            i: tuple(getattr(r, f) for f in ("content_hash", "model", *prebuilt.ROW_FIELDS))
            for i, r in Contributions(store).contributions(ids).items()
        }
        return rows, {k: ordered(v) for k, v in Contributions(store).mentions_by_paper(ids).items()}


def imported(root: Path, corpus: Path, *extra: str) -> Workspace:
    assert main(["--workspace", str(root), "init"]) == 0
    assert main(["--workspace", str(root), "import", str(corpus), *extra]) == 0
    return Workspace.open(root)


@pytest.fixture(scope="module")
def cut(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """80 snapshot papers in a folder of their own (no prebuilt file beside them yet)."""
    return snapshot_cut(tmp_path_factory.mktemp("cut") / "cut.jsonl.gz", 80)


def test_the_shipped_file_is_the_shipped_models_for_every_snapshot_paper() -> None:
    shipped = prebuilt.read(SHIPPED, shipped_model().version)  # PrebuiltError here: rerun data/build_contributions.py
    with gzip.open(SNAPSHOT, "rb") as fh:
        docs = [record_to_document(orjson.loads(line)) for line in fh]
    assert all(shipped.get(d.id, d.content_hash) is not None for d in docs)
    assert len(shipped) == len(docs) == 20_000


def test_shipped_rows_are_what_deciding_gives_on_a_sample() -> None:
    model = shipped_model()
    shipped = prebuilt.read(SHIPPED, model.version)
    with gzip.open(SNAPSHOT, "rb") as fh:
        lines = fh.readlines()
    sample = [record_to_document(orjson.loads(line)) for line in random.Random(7).sample(lines, 250)]
    rows, found = _decided(sample, model)
    by_paper: dict[str, list[object]] = {}
    for m in found:
        by_paper.setdefault(m.doc_id, []).append(m)
    for doc, row in zip(sample, rows, strict=True):
        hit = shipped.get(doc.id, doc.content_hash)
        assert hit is not None
        assert hit[0] == row, doc.id
        assert ordered(hit[1]) == ordered(by_paper.get(doc.id, [])), doc.id
    assert sum(r.introduces for r in rows) > 50  # the sample holds introductions, not only empty rows


def test_import_stores_the_matching_rows_and_decides_the_rest(tmp_path: Path, cut: Path) -> None:
    fresh = imported(tmp_path / "fresh", cut)  # no file beside it: every paper decided
    assert not prebuilt.beside(cut).exists()
    with fresh.store() as store:
        ids = Contributions(store).papers_without_contribution("")
        rows, found = Contributions(store).contributions(ids), Contributions(store).mentions_by_paper(ids)
    # the same papers, one of them edited since the file was built
    folder = tmp_path / "shipped"
    folder.mkdir()
    corpus = folder / "cut.jsonl.gz"
    with gzip.open(cut, "rb") as src, gzip.open(corpus, "wb") as dst:
        for n, line in enumerate(src):
            record = orjson.loads(line)
            if n == 3:
                record["abstract"] = "We propose ZQX, a new policy optimization method. " + record["abstract"]
                edited = record["id"]
            dst.write(orjson.dumps(record) + b"\n")
    prebuilt.write(prebuilt.beside(corpus), shipped_model().version, [(rows[i], found.get(i, [])) for i in ids])
    ws = imported(tmp_path / "ws", corpus)
    reference = tmp_path / "reference"  # the edited corpus decided from scratch, in a folder without the file
    reference.mkdir()
    (reference / corpus.name).write_bytes(corpus.read_bytes())
    again = imported(tmp_path / "again", reference / corpus.name)
    with ws.store() as store:
        assert Contributions(store).contribution_models() == {shipped_model().version: len(ids)}
        row = Contributions(store).contributions([edited])[edited]
        assert row.content_hash == Documents(store).content_hashes([edited])[edited] != rows[edited].content_hash
    assert table(ws) != table(fresh)  # the edit shows (the edited paper was decided from its new text, not copied)
    assert table(ws) == table(again)


def shipped_beside(tmp_path: Path, cut: Path, *, marked: bool = False) -> tuple[Path, Workspace, list[str]]:
    """The cut decided from scratch, and a copy of it in a folder of its own with those decisions written beside it
    as its prebuilt file (each row's ``changes`` marked when ``marked``: a row stored from the file then shows)."""
    fresh = imported(tmp_path / "fresh", cut)
    with fresh.store() as store:
        ids = Contributions(store).papers_without_contribution("")
        rows, found = Contributions(store).contributions(ids), Contributions(store).mentions_by_paper(ids)
    folder = tmp_path / "shipped"
    folder.mkdir()
    corpus = folder / cut.name
    corpus.write_bytes(cut.read_bytes())
    papers = [(replace(rows[i], changes="(from the file)") if marked else rows[i], found.get(i, [])) for i in ids]
    prebuilt.write(prebuilt.beside(corpus), shipped_model().version, papers)
    return corpus, fresh, ids


def test_import_json_counts_the_reused_rows(tmp_path: Path, cut: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus, fresh, ids = shipped_beside(tmp_path, cut)
    assert main(["--workspace", str(tmp_path / "ws"), "init"]) == 0
    capsys.readouterr()
    assert main(["--workspace", str(tmp_path / "ws"), "import", str(corpus), "--json"]) == 0
    summary = orjson.loads(capsys.readouterr().out)
    ws = Workspace.open(tmp_path / "ws")
    assert summary["prebuilt_contributions"] == summary["contributions"] == len(ids) == 80
    assert table(ws) == table(fresh)


def test_a_marked_file_shows_where_its_rows_are_stored(tmp_path: Path, cut: Path) -> None:
    """The premise of the next test: a row stored from a marked file differs from the decided one."""
    corpus, fresh, _ = shipped_beside(tmp_path, cut, marked=True)
    assert table(imported(tmp_path / "ws", corpus)) != table(fresh)


@pytest.mark.parametrize("damage", ["garbage", "stale model", "other fields", "bad line", "count"])
def test_a_stale_or_broken_file_is_one_line_and_every_paper_is_decided(
    tmp_path: Path, cut: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    corpus, fresh, _ = shipped_beside(tmp_path, cut, marked=True)  # no row of the file, the sound ones neither
    target = prebuilt.beside(corpus)
    lines = gzip.decompress(target.read_bytes()).splitlines()
    if damage == "garbage":
        target.write_bytes(b"not gzip at all")
    elif damage == "stale model":
        header = orjson.loads(lines[0]) | {"model": "c000000000000"}
        target.write_bytes(gzip.compress(b"\n".join([orjson.dumps(header), *lines[1:]])))
    elif damage == "other fields":  # built before a stored field was added: out of date, one line, not "line 2"
        header = orjson.loads(lines[0]) | {"fields": [*prebuilt.ROW_FIELDS, "candidates"]}
        target.write_bytes(gzip.compress(b"\n".join([orjson.dumps(header), *lines[1:]])))
    elif damage == "bad line":
        lines[5] = b'["x", "y", [true, "NAME"], []]'
        target.write_bytes(gzip.compress(b"\n".join(lines)))
    else:
        target.write_bytes(gzip.compress(b"\n".join(lines[:-1])))
    capsys.readouterr()
    ws = imported(tmp_path / "ws", corpus)
    notes = [line for line in capsys.readouterr().err.splitlines() if "prebuilt contributions" in line]
    assert len(notes) == 1 and target.name in notes[0] and "decided instead" in notes[0]
    if damage == "other fields":
        assert "other row fields" in notes[0]
    assert table(ws) == table(fresh)
