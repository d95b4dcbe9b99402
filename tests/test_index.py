from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from radar.app.cli import main
from radar.crawler.documents import Documents
from radar.index.config import EmbeddingConfig
from radar.index.embedder import FastTokenizer, document_text, make_embedder, model_id_for, resolve_model_dir
from radar.index.embeddings import Embeddings
from radar.index.errors import IndexError_, ModelNotFound
from radar.index.search import rrf
from radar.index.vectors import VectorIndex
from radar.store import Workspace
from tests.cli_helpers import run_cli
from tests.conftest import ROOT
from tests.index_helpers import dev_queries, write_subset


@pytest.fixture
def copy_of(indexed: Workspace, tmp_path: Path) -> Workspace:
    shutil.copytree(indexed.root, tmp_path / "ws")
    return Workspace.open(tmp_path / "ws")


def _count(ws: Workspace, sql: str) -> int:
    conn = sqlite3.connect(ws.db_path)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


def test_index_embeds_everything_once(indexed: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    docs = _count(indexed, "SELECT COUNT(*) FROM documents")
    assert _count(indexed, "SELECT COUNT(*) FROM embeddings") == docs
    again = run_cli(capsys, "--workspace", str(indexed.root), "index", "--json")
    assert again.code == 0
    report = again.json()
    assert report["embedded"] == 0 and report["vectors"] == docs and report["kind"] == "flat"
    assert report["model_id"].startswith("all-MiniLM-L6-v2@") and report["model_id"].endswith("/win128x256/int8")


def test_known_item_search_finds_most_dev_queries(indexed: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    found = 0
    for q in dev_queries():
        res = run_cli(capsys, "--workspace", str(indexed.root), "search", q["q"], "-k", "10", "--json")
        assert res.code == 0, res.err
        hits = res.json()
        assert all(set(h) == {"id", "title", "score", "published", "tags", "url"} for h in hits)
        found += q["id"] in [h["id"] for h in hits]
    assert found >= 8, f"only {found}/10 dev queries found their paper in the top 10"


def test_filters_apply_inside_retrieval(indexed: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    ws = str(indexed.root)
    res = run_cli(
        capsys,
        "--workspace",
        ws,
        "search",
        "reinforcement learning for reasoning",
        "-k",
        "20",
        "--since",
        "2025-06-01",
        "--until",
        "2025-12-31",
        "--json",
    )
    hits = res.json()
    assert hits and all("2025-06-01" <= h["published"] <= "2025-12-31" for h in hits)
    cat = run_cli(capsys, "--workspace", ws, "search", "GPU cluster scheduling", "--category", "cs.DC", "--json").json()
    with indexed.store() as store:
        docs = Documents(store).of([h["id"] for h in cat])
    assert cat and all("cs.DC" in d.categories for d in docs.values())
    none = run_cli(capsys, "--workspace", ws, "search", "anything", "--source", "no-such-source", "--json")
    assert none.code == 0 and none.json() == []


def test_tag_filter_names_known_tags(copy_of: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    with copy_of.store() as store:
        doc_id = next(Documents(store).scan()).id
        store.conn.execute("INSERT INTO document_tags VALUES (?, 'graphics-xr', 0.9, 'user', '2026-01-01')", (doc_id,))
    ws = str(copy_of.root)
    bad = run_cli(capsys, "--workspace", ws, "search", "rendering", "--tag", "nope")
    assert bad.code == 1 and "tags in use: graphics-xr" in bad.err
    good = run_cli(capsys, "--workspace", ws, "search", "rendering", "--tag", "graphics-xr", "--json").json()
    assert [h["id"] for h in good] == [doc_id] and good[0]["tags"] == ["graphics-xr"]


def test_similar_excludes_the_paper_itself(indexed: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    target = dev_queries()[0]["id"]
    res = run_cli(capsys, "--workspace", str(indexed.root), "similar", target, "-k", "5", "--json")
    hits = res.json()
    assert len(hits) == 5 and target not in [h["id"] for h in hits]
    assert hits == sorted(hits, key=lambda h: -h["score"])
    missing = run_cli(capsys, "--workspace", str(indexed.root), "similar", "9999.99999")
    assert missing.code == 1 and "no document" in missing.err


def test_changed_abstract_is_re_embedded_alone(copy_of: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    target = dev_queries()[1]["id"]
    with copy_of.store() as store:
        doc = Documents(store).get(target)
        old_vec = Embeddings(store).vector_of(target, Embeddings(store).models().popitem()[0])
        from dataclasses import replace

        Documents(store).upsert(
            [replace(doc, abstract="A completely new abstract about FPGA accelerators.", version=doc.version + 1)]
        )
    report = run_cli(capsys, "--workspace", str(copy_of.root), "index", "--json").json()
    assert report["embedded"] == 1
    with copy_of.store() as store:
        new_vec = Embeddings(store).vector_of(target, report["model_id"])
    assert new_vec.vec_id == old_vec.vec_id and new_vec.vector != old_vec.vector  # same vec_id, new vector
    hits = run_cli(capsys, "--workspace", str(copy_of.root), "search", "FPGA accelerators abstract", "--json").json()
    assert target in [h["id"] for h in hits[:3]]


def test_switching_model_settings_re_embeds_everything(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    subset = tmp_path / "subset.jsonl.gz"
    write_subset(subset, 20)  # a small workspace: re-embedding all of it is what is tested, not its size
    ws = str(tmp_path / "ws")
    for argv in (["init"], ["import", str(subset)], ["index"]):
        assert main(["--workspace", ws, *argv]) == 0
    copy_of = Workspace.open(Path(ws))
    cfg = copy_of.config_path
    cfg.write_text(cfg.read_text().replace("max_seq_length = 128", "max_seq_length = 64"))
    stale = run_cli(capsys, "--workspace", ws, "search", "GRPO")
    assert stale.code == 1 and "run `radar index` to re-embed" in stale.err
    report = run_cli(capsys, "--workspace", ws, "index", "--json").json()
    docs = _count(copy_of, "SELECT COUNT(*) FROM documents")
    assert report["embedded"] == docs and report["vectors"] == docs and "/win64x256/" in report["model_id"]
    assert _count(copy_of, "SELECT COUNT(DISTINCT model_id) FROM embeddings") == 1


def test_stale_index_file_is_rebuilt_not_trusted(copy_of: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = copy_of.index_dir / "vectors" / "vectors.json"
    manifest.write_text(manifest.read_text().replace('"generation": ', '"generation": 1000'))
    (copy_of.index_dir / "bm25" / "keyword.json").write_text("{broken")
    q = dev_queries()[2]
    hits = run_cli(capsys, "--workspace", str(copy_of.root), "search", q["q"], "--json").json()
    assert q["id"] in [h["id"] for h in hits]


def test_nothing_indexed_yet(workspace: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    res = run_cli(capsys, "--workspace", str(workspace.root), "search", "x")
    assert res.code == 1 and "run `radar index` first" in res.err


def test_backends_and_precisions_agree(shared_model_cache: Path) -> None:
    texts = [
        "Group relative policy optimization for reasoning.",
        "FlashAttention kernels on H100 GPUs.",
        "x",
        "A long abstract. " * 80,
    ]
    onnx_fp = make_embedder(EmbeddingConfig(), cache_dir=shared_model_cache, precision="fp").embed(texts)
    torch_fp = make_embedder(
        EmbeddingConfig(backend="torch", quantize=False), device="cpu", cache_dir=shared_model_cache
    ).embed(texts)
    int8 = make_embedder(EmbeddingConfig(), cache_dir=shared_model_cache).embed(texts)
    assert onnx_fp.shape == (4, 384)
    assert np.allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-4)
    assert (onnx_fp * torch_fp).sum(1).min() > 0.9999
    assert (onnx_fp * int8).sum(1).min() > 0.97


def test_long_texts_are_embedded_window_by_window() -> None:
    from transformers import AutoTokenizer

    from radar.index.embedder import token_windows

    tok = AutoTokenizer.from_pretrained(resolve_model_dir("default"))
    seqs, owner, weight = token_windows(tok, ["word " * 300, "short text"], window=128, total=256)
    assert list(owner) == [0, 0, 1]  # 254 content tokens -> 126 + 126 (+2 dropped as a tiny tail), then 1 window
    assert all(len(s) <= 128 and s[0] == tok.cls_token_id and s[-1] == tok.sep_token_id for s in seqs)
    assert list(weight[:2]) == [126, 126]


def test_model_id_tracks_what_changes_vectors() -> None:
    d = resolve_model_dir("default")
    base = model_id_for(EmbeddingConfig(), d, int8=True)
    assert model_id_for(EmbeddingConfig(max_seq_length=256), d, int8=True) != base
    assert model_id_for(EmbeddingConfig(max_tokens=512), d, int8=True) != base
    assert model_id_for(EmbeddingConfig(), d, int8=False) != base
    assert model_id_for(EmbeddingConfig(batch_size=8, threads=1), d, int8=True) == base


def test_unknown_model_never_downloads() -> None:
    with pytest.raises(ModelNotFound, match="not a local folder nor in the local Hugging Face cache"):
        resolve_model_dir("someone/some-model-that-is-not-here")


def test_vector_index_exact_and_ivf(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(50, 32)).astype(np.float32)
    data = centers[rng.integers(0, 50, 20000)] + 0.3 * rng.normal(size=(20000, 32)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    ids = np.arange(10, 20010, dtype=np.int64)
    exact = VectorIndex.build("m", ids, data, exact_below=100_000)
    ivf = VectorIndex.build("m", ids, data, exact_below=1000, nprobe=32)
    assert (exact.manifest.kind, ivf.manifest.kind) == ("flat", "ivf")
    queries = data[:200] + 0.05 * rng.normal(size=(200, 32)).astype(np.float32)
    _, truth = exact.search(queries, 10)
    _, approx = ivf.search(queries, 10)
    recall = np.mean([len(set(a) & set(t)) / 10 for a, t in zip(approx, truth, strict=True)])
    assert recall >= 0.95
    # replace by id, restrict by id, persist
    exact.upsert(np.array([10], np.int64), -data[:1])
    assert len(exact) == 20000
    _, top = exact.search(-data[:1], 1)
    assert top[0][0] == 10
    _, only = exact.search(queries[:1], 5, allowed=np.array([11, 12, 13], np.int64))
    assert set(only[0]) <= {11, 12, 13, -1}
    exact.save(tmp_path / "v")
    again = VectorIndex.load(tmp_path / "v")
    assert again is not None and len(again) == 20000 and again.manifest.model_id == "m"
    # memory-mapped as a search opens them (the flat codes, the IVF lists): the same results, and read-only
    ivf.save(tmp_path / "ivf")
    for index, folder in ((exact, tmp_path / "v"), (ivf, tmp_path / "ivf")):
        mapped = VectorIndex.load(folder, 32, mmap=True)
        assert mapped is not None and mapped.mapped and mapped.manifest.kind == index.manifest.kind
        for allowed in (None, ids[::7]):
            want, got = index.search(queries, 10, allowed), mapped.search(queries, 10, allowed)
            assert np.array_equal(want[1], got[1]) and np.array_equal(want[0], got[0])
        with pytest.raises(IndexError_, match="read-only"):
            mapped.upsert(ids[:1], data[:1])


def test_a_faiss_without_the_flat_mmap_flag_reads_the_index_into_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FAISS releases pyproject allows (faiss-cpu>=1.8) may lack IO_FLAG_MMAP_IFC: a flat index is then read into
    memory, the same results, instead of an AttributeError."""
    import faiss

    rng = np.random.default_rng(0)
    data = rng.standard_normal((50, 8)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    ids = np.arange(50, dtype=np.int64)
    exact = VectorIndex.build("m", ids, data, exact_below=100_000)
    exact.save(tmp_path / "v")
    monkeypatch.delattr(faiss, "IO_FLAG_MMAP_IFC", raising=False)
    loaded = VectorIndex.load(tmp_path / "v", mmap=True)
    assert loaded is not None and not loaded.mapped
    assert np.array_equal(loaded.search(data[:3], 5)[1], exact.search(data[:3], 5)[1])


def test_rrf_prefers_agreement() -> None:
    scores = rrf([["a", "b", "c"], ["b", "a", "d"]], k=60)
    assert max(scores, key=scores.get) in {"a", "b"} and scores["a"] == scores["b"] > scores["c"] > 0


@pytest.mark.slow
def test_index_killed_midway_resumes_consistently(tmp_path: Path) -> None:
    subset = tmp_path / "subset.jsonl.gz"
    write_subset(subset, 80, step=23)
    ws = tmp_path / "ws"
    assert main(["--workspace", str(ws), "init"]) == 0
    assert main(["--workspace", str(ws), "import", str(subset)]) == 0
    # `radar index` in its own process, committing chunks of 32 papers instead of 256 (index/pipeline.py CHUNK),
    # so that a kill lands between commits after a few seconds of embedding, not a minute
    run_index = (
        "import sys; import radar.index.pipeline as pipeline; pipeline.CHUNK = 32; "
        "from radar.app.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", run_index, "--workspace", str(ws), "index"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workspace = Workspace.open(ws)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if workspace.db_path.exists() and _count(workspace, "SELECT COUNT(*) FROM embeddings") >= 32:
            break
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    partial = _count(workspace, "SELECT COUNT(*) FROM embeddings")
    docs = _count(workspace, "SELECT COUNT(*) FROM documents")
    assert 0 < partial < docs, "the kill should land midway"
    assert main(["--workspace", str(ws), "index"]) == 0
    assert _count(workspace, "SELECT COUNT(*) FROM embeddings") == docs
    loaded = VectorIndex.load(workspace.index_dir / "vectors")
    with workspace.store() as store:
        assert loaded is not None and len(loaded) == docs
        assert loaded.manifest.generation == Embeddings(store).generation()


def _make_stale(ws: Workspace, doc_ids: list[str]) -> None:
    """As if these papers' text had changed since they were embedded: an old content hash, a zero vector."""
    with ws.store() as store:
        store.conn.executemany(
            "UPDATE embeddings SET content_hash = 'stale', vector = zeroblob(length(vector)) WHERE doc_id = ?",
            [(d,) for d in doc_ids],
        )


def _vectors_of(ws: Workspace, doc_ids: list[str], model_id: str) -> dict[str, np.ndarray]:
    with ws.store() as store:
        return {d: np.frombuffer(Embeddings(store).vector_of(d, model_id).vector, np.float32) for d in doc_ids}


@pytest.mark.slow
def test_ray_engine_gives_the_local_engine_results(copy_of: Workspace, capsys: pytest.CaptureFixture[str]) -> None:
    """Ray re-embeds stale vectors (the dev-query targets and every 10th other paper: about 40, split across
    the Ray workers) and stores what the local engine stores for the same work. (The reference is the local
    engine on the same papers, not the vectors of the first full run: int8 activations are quantized per
    batch, so a paper's vector depends on the papers embedded with it, by up to cosine 0.994.)"""
    ws = str(copy_of.root)
    with copy_of.store() as store:
        model_id = next(iter(Embeddings(store).models()))
        all_ids = [r[0] for r in store.conn.execute("SELECT doc_id FROM embeddings ORDER BY doc_id")]
    stale = sorted({q["id"] for q in dev_queries()} | set(all_ids[::10]))
    docs = _count(copy_of, "SELECT COUNT(*) FROM documents")
    _make_stale(copy_of, stale)
    res = run_cli(capsys, "--workspace", ws, "index", "--engine", "ray", "--json")
    assert res.code == 0, res.err
    assert len(stale) >= 40 and res.json()["embedded"] == len(stale) and res.json()["vectors"] == docs
    by_ray = _vectors_of(copy_of, stale, model_id)
    q = dev_queries()[3]
    assert q["id"] in [h["id"] for h in run_cli(capsys, "--workspace", ws, "search", q["q"], "--json").json()]
    _make_stale(copy_of, stale)
    assert run_cli(capsys, "--workspace", ws, "index", "--json").json()["embedded"] == len(stale)
    by_local = _vectors_of(copy_of, stale, model_id)
    assert min(float(by_ray[d] @ by_local[d]) for d in stale) > 0.9999


def test_packaged_model_tokenizer_without_transformers_gives_the_same_ids() -> None:
    """The packaged model's tokenizer is loaded with `tokenizers` alone (no torch/transformers import in
    `radar search`); it must give AutoTokenizer's ids, or every prebuilt vector and stored index would drift."""
    import gzip
    import json

    from transformers import AutoTokenizer

    model_dir = resolve_model_dir("default")
    reference, fast = AutoTokenizer.from_pretrained(model_dir), FastTokenizer(model_dir)
    assert (fast.cls_token_id, fast.sep_token_id, fast.pad_token_id) == (
        reference.cls_token_id,
        reference.sep_token_id,
        reference.pad_token_id,
    )
    with gzip.open(ROOT / "data" / "snapshot.jsonl.gz", "rt", encoding="utf-8") as fh:
        texts = [document_text(r["title"], r["abstract"]) for i, r in enumerate(map(json.loads, fh)) if i % 40 == 0]
    texts += ["", " ", "Ünïcödé café 中文字符 ｆｕｌｌｗｉｄｔｈ", "a\u200bb\u00adc", "\x00\x1b[31m", "GRPO " * 2000]
    for max_length in (254, 30):
        got = fast(texts, add_special_tokens=False, truncation=True, max_length=max_length)["input_ids"]
        want = reference(texts, add_special_tokens=False, truncation=True, max_length=max_length)["input_ids"]
        assert got == want


def test_names_with_digits_and_symbols_are_whole_tokens() -> None:
    """FP8, H100, INT4, KV-cache, Qwen2.5 are tokens of their own in BM25 and the query; MXFP8 is an FP8 format;
    bm25s's default pattern split them (Qwen2.5 -> qwen2) or kept them apart (MXFP8 never matched FP8)."""
    from radar.index.keyword import KeywordIndex, names, terms

    assert terms("Qwen2.5-7B on H100 with INT4 KV-cache") == [
        "qwen2.5-7b", "qwen2.5", "qwen2", "7b", "h100", "int4", "kv-cache", "kv", "cache",
    ]  # fmt: skip
    assert "fp8" in terms("Recipes for Pre-training LLMs with MXFP8")
    assert names("FP8 training stability on H100") == ["fp8", "h100"]
    assert names("Qwen2.5 math") == ["qwen2.5"] and names("KV cache compression") == []
    docs = [
        ("a", "PolyPythias: Stability and Outliers across Fifty Language Model Pre-Training Runs", "Training runs."),
        ("b", "Recipes for Pre-training LLMs with MXFP8", "We train with MXFP8 and study its stability."),
        ("c", "Qwen2-VL: seeing the world", "A vision model."),
        ("d", "RL on Qwen2.5-Math-7B", "Math reasoning with Qwen2.5."),
    ]
    index = KeywordIndex.build(docs, "")
    assert [d for d, _ in index.search("FP8 training stability", 4)][0] == "b"
    assert [d for d, _ in index.search("Qwen2.5", 4)][0] == "d"
    assert index.containing(["fp8"]) == {"b"} and index.containing(["qwen2.5"]) == {"d"}


def test_a_keyword_index_of_the_old_tokens_is_rebuilt(tmp_path: Path) -> None:
    import json

    from radar.index.keyword import KeywordIndex

    built = KeywordIndex.build([("a", "FP8 training", "text")], "fp")
    built.save(tmp_path / "bm25")
    assert KeywordIndex.load(tmp_path / "bm25") is not None
    meta = tmp_path / "bm25" / "keyword.json"
    old = json.loads(meta.read_text())
    del old["tokenizer"]  # saved before names were tokens
    meta.write_text(json.dumps(old))
    assert KeywordIndex.load(tmp_path / "bm25") is None  # load_keyword rebuilds it


def test_search_loads_the_index_stage_only(indexed: Workspace) -> None:
    """`radar search` imports neither the rest of the composition root (the tagger, trends with SciPy, method cards,
    reproductions: ~1.2 CPU-s before app/wiring_search.py) nor bm25s (SciPy) to read the keyword index, nor torch."""
    code = (
        "import sys\n"
        "from radar.app.cli import main\n"
        f"assert main(['--workspace', {str(indexed.root)!r}, 'search', 'GRPO variance', '--json']) == 0\n"
        "heavy = ('scipy', 'bm25s', 'sklearn', 'torch', 'transformers', 'radar.app.wiring',\n"
        "         'radar.analysis.trends.compute', 'radar.analysis.tags.tagger', 'radar.app.reproductions')\n"
        "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stderr.strip().splitlines()[-1] == "[]", out.stderr
    assert json.loads(out.stdout)  # it did search


def test_the_optimised_query_model_is_saved_once_and_gives_the_same_vectors(shared_model_cache: Path) -> None:
    """The first ONNX session saves its optimised graph beside the model; the next loads it with optimisation off,
    and both embed bit for bit as a session that optimises in memory at ONNX Runtime's highest level (as every
    session did before). A saved graph that is damaged is made again."""
    import onnxruntime as ort

    from radar.index.embedder import OnnxEmbedder, model_fingerprint
    from radar.index.onnx_export import onnx_file, optimised_file

    texts = ["Group relative policy optimization.", "FP8 training stability", "x", "A long abstract. " * 80]
    model_dir = resolve_model_dir("default")
    source = onnx_file(shared_model_cache / model_fingerprint(model_dir), quantize=True)
    first = OnnxEmbedder(EmbeddingConfig(), model_dir, shared_model_cache, int8=True)
    saved = optimised_file(source)
    assert saved.is_file()
    made = saved.stat().st_mtime_ns
    second = OnnxEmbedder(EmbeddingConfig(), model_dir, shared_model_cache, int8=True)
    assert saved.stat().st_mtime_ns == made  # read, not made again
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    plain = OnnxEmbedder(EmbeddingConfig(), model_dir, shared_model_cache, int8=True)
    plain.session = ort.InferenceSession(str(source), opts, providers=["CPUExecutionProvider"])
    want = plain.embed(texts)
    assert np.array_equal(first.embed(texts), want) and np.array_equal(second.embed(texts), want)
    saved.write_bytes(b"cut short")
    third = OnnxEmbedder(EmbeddingConfig(), model_dir, shared_model_cache, int8=True)
    assert np.array_equal(third.embed(texts), want) and saved.stat().st_size > 1_000_000


def test_radar_index_saves_a_bm25s_layout_again_without_rebuilding(
    copy_of: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    """A workspace whose keyword index bm25s saved (the layout before index/postings.py) is searched as it is, the
    same hits; `radar index` then writes it in the memory-mapped layout without rebuilding it."""
    import bm25s

    from radar.index.keyword import TOKENIZER, KeywordIndex

    ws, folder = str(copy_of.root), copy_of.index_dir / "bm25"
    query = dev_queries()[3]["q"]
    want = run_cli(capsys, "--workspace", ws, "search", query, "--json").json()
    current = KeywordIndex.load(folder)
    assert current is not None and (folder / "keyword.json").is_file()
    with copy_of.store() as store:
        docs = [(d.id, d.title, d.abstract) for d in Documents(store).scan()]
    from radar.index.keyword import document_terms

    retriever = bm25s.BM25()
    retriever.index([document_terms(t, a) or ["\x00"] for _, t, a in docs], show_progress=False)
    shutil.rmtree(folder)
    retriever.save(str(folder), show_progress=False)
    meta = {"fingerprint": current.fingerprint, "ids": [d[0] for d in docs], "tokenizer": TOKENIZER}
    (folder / "doc_ids.json").write_text(json.dumps(meta))
    (folder / "acronyms.json").write_text(json.dumps(current.acronyms))
    assert run_cli(capsys, "--workspace", ws, "search", query, "--json").json() == want
    report = run_cli(capsys, "--workspace", ws, "index", "--json").json()
    assert report["keyword_rebuilt"] is False and (folder / "keyword.json").is_file()
    assert not (folder / "doc_ids.json").exists()
    assert run_cli(capsys, "--workspace", ws, "search", query, "--json").json() == want
