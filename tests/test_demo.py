"""The first ten minutes: shipped vectors of the bundled snapshot, reused by `radar index`; the demo workspace.

The shipped file (data/snapshot_vectors.npz, built by data/build_embeddings.py) must give what embedding from
scratch gives: the `indexed` fixture embeds the same papers with the packaged model, and both workspaces
must hold the same vectors (within the int8 storage error) and answer the dev queries alike.
"""

from __future__ import annotations

import gzip
import itertools
import json
import shutil
import sqlite3
import sys
from pathlib import Path

import numpy as np
import pytest

from radar.analysis.trends.result import NewMethod
from radar.app import steps, wiring
from radar.app.cmd_core import DEMO_FEEDS, demo_config
from radar.app.context import Radar
from radar.index.errors import IndexError_
from radar.index.prebuilt import PrebuiltVectors, dequantize, quantize, write_prebuilt
from radar.store import Workspace
from tests.cli_helpers import run_cli
from tests.conftest import N_BACKGROUND, ROOT, SNAPSHOT
from tests.index_helpers import dev_queries, write_subset

SHIPPED = ROOT / "data" / "snapshot_vectors.npz"
# int8 storage alone keeps cosine > 0.9999 (test below). Embedding itself is not exactly repeatable: ONNX Runtime's
# dynamic int8 quantization scales activations per batch, so a paper's vector depends on the papers batched with
# it; two from-scratch runs over different paper sets agreed to cosine >= 0.9945 here (350 papers, and 16).
MIN_COSINE = 0.99


def vectors(ws: Workspace) -> dict[str, np.ndarray]:
    with sqlite3.connect(ws.db_path) as conn:
        rows = conn.execute("SELECT doc_id, vector FROM embeddings").fetchall()
    return {d: np.frombuffer(v, dtype=np.float32) for d, v in rows}


def test_int8_storage_keeps_vectors() -> None:
    """Row-scaled int8 storage of unit vectors (384-d, as the model's): cosine to the original >= 0.9999."""
    rng = np.random.default_rng(0)
    v = rng.normal(size=(2000, 384)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    back = dequantize(*quantize(v))
    cos = (v * back).sum(axis=1)
    assert cos.min() > 0.9999
    assert np.allclose(np.linalg.norm(back, axis=1), 1.0, atol=1e-5)


def test_prebuilt_file_is_used_only_for_its_model_and_content(tmp_path: Path) -> None:
    v = np.eye(4, dtype=np.float32)
    path = write_prebuilt(
        tmp_path / "v.npz", model_id="m@1/win8x8/int8", ids=list("abcd"), hashes=list("1234"), vectors=v
    )
    pre = PrebuiltVectors.open(path)
    assert len(pre) == 4 and pre.model_id == "m@1/win8x8/int8"
    ids, got = pre.take("m@1/win8x8/int8", [("a", "1"), ("b", "changed"), ("zz", "9"), ("d", "4")])
    assert ids == ["a", "d"] and np.allclose(got, v[[0, 3]], atol=1e-6)
    assert pre.take("other@2/win8x8/int8", [("a", "1")])[0] == []
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(IndexError_, match="not a prebuilt-vectors file"):
        PrebuiltVectors.open(tmp_path / "bad.npz")
    data = path.read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])  # a truncated copy: zipfile.BadZipFile inside
    with pytest.raises(IndexError_, match="cut.npz is not a prebuilt-vectors file"):
        PrebuiltVectors.open(tmp_path / "cut.npz")


def test_shipped_vectors_match_embedding_from_scratch(
    indexed: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The papers of `indexed` (embedded from scratch) imported with the shipped vectors beside them: every
    paper the file covers is reused (the rest embedded), every vector agrees, and the dev queries find the same
    known items and nearly the same top 10."""
    subset = tmp_path / "subset.jsonl.gz"
    write_subset(subset, N_BACKGROUND)
    shutil.copyfile(SHIPPED, tmp_path / "subset_vectors.npz")
    shipped = PrebuiltVectors.open(SHIPPED)
    ws = tmp_path / "ws"
    assert run_cli(capsys, "--workspace", str(ws), "init").code == 0
    res = run_cli(capsys, "--workspace", str(ws), "import", str(subset), "--json")
    assert res.code == 0 and res.json()["prebuilt_vectors"] == len(shipped)
    with sqlite3.connect(Workspace.open(ws).db_path) as conn:
        wanted = conn.execute("SELECT id, content_hash FROM documents").fetchall()
    covered = len(shipped.take(shipped.model_id, wanted)[0])
    report = run_cli(capsys, "--workspace", str(ws), "index", "--json").json()
    reused = Workspace.open(ws)
    scratch = vectors(indexed)
    assert report["model_id"] == shipped.model_id and covered > len(wanted) // 4
    assert report["reused"] == covered and report["embedded"] == len(scratch) - covered == report["vectors"] - covered
    mine = vectors(reused)
    cos = np.array([float(mine[d] @ scratch[d]) for d in scratch])
    assert cos.min() >= MIN_COSINE, f"worst cosine {cos.min():.5f}; rebuild with data/build_embeddings.py"

    def top(root: Path, query: str) -> list[str]:
        out = run_cli(capsys, "--workspace", str(root), "search", query, "-k", "10", "--json")
        assert out.code == 0
        return [h["id"] for h in out.json()]

    queries = dev_queries()[:12]
    found = {"scratch": 0, "reused": 0}
    overlaps = []
    for q in queries:
        a, b = top(indexed.root, q["q"]), top(ws, q["q"])
        found["scratch"] += q["id"] in a
        found["reused"] += q["id"] in b
        overlaps.append(len(set(a) & set(b)) / 10)
        assert overlaps[-1] >= 0.7, (q["q"], a, b)
    assert abs(found["scratch"] - found["reused"]) <= 1 and found["reused"] >= len(queries) // 2, found
    assert sum(overlaps) / len(overlaps) >= 0.9, overlaps


def test_changed_papers_are_embedded_the_rest_reused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A paper whose text differs from the one the shipped vector was made from is embedded, not reused."""
    lines = []
    with gzip.open(SNAPSHOT, "rt", encoding="utf-8") as src:
        for line in itertools.islice(src, 12):
            lines.append(json.loads(line))
    lines[3]["abstract"] += " (revised: a new section on scaling)"
    src = tmp_path / "few.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    shutil.copyfile(SHIPPED, tmp_path / "few_vectors.npz")
    ws = tmp_path / "ws"
    assert run_cli(capsys, "--workspace", str(ws), "init").code == 0
    assert run_cli(capsys, "--workspace", str(ws), "import", str(src)).code == 0
    radar = Radar(Workspace.open(ws))
    run = steps.index(radar, device="cpu")
    assert (run.report.embedded, run.report.reused) == (1, 11)
    again = steps.index(radar, device="cpu")  # nothing left to do
    assert (again.report.embedded, again.report.reused) == (0, 0)


def test_build_script_reproduces_the_shipped_vectors(tmp_path: Path) -> None:
    """data/build_embeddings.py on the first papers gives the shipped file's vectors (so the file is current)."""
    sys.path.insert(0, str(ROOT / "data"))
    try:
        import build_embeddings
    finally:
        sys.path.remove(str(ROOT / "data"))
    out = tmp_path / "first.npz"
    result = build_embeddings.build(SNAPSHOT, out, limit=16)
    built, shipped = PrebuiltVectors.open(out), PrebuiltVectors.open(SHIPPED)
    assert result["vectors"] == 16 and built.model_id == shipped.model_id
    assert built.meta["max_seq_length"] == shipped.meta["max_seq_length"] == 128
    with np.load(out) as data:
        wanted = list(zip(data["ids"].tolist(), data["hashes"].tolist(), strict=True))
    ids_a, a = built.take(built.model_id, wanted)
    ids_b, b = shipped.take(shipped.model_id, wanted)
    assert ids_a == ids_b == [d for d, _ in wanted]
    assert (a * b).sum(axis=1).min() >= MIN_COSINE


def test_shipped_data_stays_small() -> None:
    """All bundled data (snapshot, vectors, feeds, labels) under 30 MB."""
    folders = [ROOT / "data", ROOT / "analysis" / "tags" / "labels"]
    total = sum(p.stat().st_size for f in folders for p in f.rglob("*") if p.is_file())
    assert total < 30e6, f"bundled data is {total / 1e6:.1f} MB"


# -- the demo workspace ------------------------------------------------------------------------------------
def test_demo_sources_are_relative_and_the_workspace_moves(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The demo's radar.toml names its feeds relative to the workspace; moved elsewhere, its sources still work."""
    feeds = sorted((ROOT / "data" / "feeds").glob("*.xml"))
    text = demo_config([f.name for f in feeds])
    assert "file://" not in text and str(ROOT) not in text
    first = tmp_path / "first"
    ws, _ = Workspace.init(first, config_text=text)
    for feed in feeds:
        (ws.resolve(DEMO_FEEDS)).mkdir(exist_ok=True)
        shutil.copyfile(feed, ws.resolve(DEMO_FEEDS) / feed.name)
    moved = tmp_path / "elsewhere" / "moved"
    shutil.move(str(first), moved)
    settings = Radar(Workspace.open(moved)).settings
    urls = [s.target for s in settings.sources]
    assert urls and all(u.startswith((moved / DEMO_FEEDS).as_uri()) for u in urls)
    res = run_cli(capsys, "--workspace", str(moved), "crawl", "--source", "lilianweng")
    assert res.code == 0 and "lilianweng: 53 new" in res.out


def test_relative_paths_resolve_against_the_workspace_and_urls_stay(tmp_path: Path) -> None:
    ws, _ = Workspace.init(tmp_path / "ws")
    assert wiring.prebuilt_vectors(Radar(ws)) == []  # nothing imported with vectors: nothing to reuse
    from radar.app.settings import resolve_location

    assert resolve_location(ws, "https://example.org/feed.xml") == "https://example.org/feed.xml"
    assert resolve_location(ws, "feeds/x.xml") == (ws.root / "feeds" / "x.xml").as_uri()
    assert resolve_location(ws, "feeds/").endswith("/feeds/")
    assert resolve_location(ws, "/abs/feed.xml") == "file:///abs/feed.xml"


def test_demo_story_repeats_the_report_and_lists_methods_apart_from_models(tmp_path: Path) -> None:
    """The demo's summary is the report's own brief and trends (it computes nothing of its own): methods and
    models on their lines, other kinds left out as the report leaves them out."""
    from radar.app.cmd_core import report_story
    from radar.reports.build import BuiltReport
    from radar.reports.period import parse_week
    from radar.reports.result import Bullet, Headline, Notes, PeriodInfo, ReportContent, ReportTrends
    from tests import trend_rows

    def name(n: str, kind: str | None) -> NewMethod:
        return trend_rows.method(name=n, kind=kind, first_seen="2025-08-01")

    content = ReportContent(
        title="t",
        period=PeriodInfo("2025-W39", "2025-09-22", "2025-09-28", "2025-W39 (...)"),
        generated_at="",
        headline=Headline(documents=325),
        tag_volume=[],
        trends=ReportTrends(
            as_of="2025-09-28",
            start="2025-08-29",
            emerging=[trend_rows.term(term="GPT-5", recent_count=5)],
            declining=[],
            new_methods=[name("GSPO", "method")],
            new_models=[name("GPT-5", "model")],
            topics=[],
        ),
        top_overall=[],
        top_papers=[],
        posts=[],
        posts_total=0,
        recommendations=[],
        runs=[],
        notes=Notes(),
        summary=[Bullet("Reproduce: DAPO (`radar repro run --method dapo`)")],
    )
    lines = report_story(BuiltReport(parse_week("2025-W39"), content))
    assert "- Reproduce: DAPO (radar repro run --method dapo)" in lines  # the brief, without our backticks
    assert "emerging over 2025-08-29..2025-09-28: GPT-5 (5 recent)" in lines
    methods = next(line for line in lines if line.startswith("new methods:"))
    models = next(line for line in lines if line.startswith("new models:"))
    assert "GSPO" in methods and "GPT-5" not in methods and "GPT-5" in models
    assert report_story(None) == ["no report was written (see the report step above)"]


def test_demo_config_closes_the_reproduction_loop(tmp_path: Path) -> None:
    """The demo's radar.toml lets `radar weekly` queue the week's reproduce recommendations (a valid [repro])."""
    ws, _ = Workspace.init(tmp_path / "ws", config_text=demo_config(["blog_x.xml"]))
    assert Radar(ws).settings.repro.weekly_runs == 2
