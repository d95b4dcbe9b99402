"""`radar index` with nothing new to embed loads no model (the prebuilt vectors only need its id and width); the
lazy embedder is the configured one once it embeds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pytest

from radar.index.config import EmbeddingConfig
from radar.index.embedder import LazyEmbedder, lazy_embedder, make_embedder, pooled_dim, resolve_model_dir

SHIPPED_VECTORS = Path(__file__).resolve().parents[1] / "data" / "snapshot_vectors.npz"
TEXTS = ["Group relative policy optimization. A critic-free RL method.", "FP8 training recipes for LLMs."]


def test_lazy_embedder_has_the_real_ones_id_and_width_and_loads_on_first_embed(shared_model_cache: Path) -> None:
    real = make_embedder(EmbeddingConfig(), device="cpu", cache_dir=shared_model_cache)
    lazy = lazy_embedder(EmbeddingConfig(), device="cpu", cache_dir=shared_model_cache)
    assert isinstance(lazy, LazyEmbedder)
    assert (lazy.model_id, lazy.dim, lazy.device) == (real.model_id, real.dim, real.device)
    assert lazy._made is None  # nothing loaded yet
    np.testing.assert_array_equal(lazy.embed(TEXTS), real.embed(TEXTS))
    assert lazy._made is not None


def test_a_model_folder_that_does_not_say_its_width_is_loaded_at_once(tmp_path: Path) -> None:
    assert pooled_dim(resolve_model_dir("default")) == 384
    assert pooled_dim(tmp_path) is None  # no modules.json
    (tmp_path / "modules.json").write_text(
        '[{"path": "", "type": "sentence_transformers.models.Transformer"},'
        ' {"path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},'
        ' {"path": "2_Dense", "type": "sentence_transformers.models.Dense"}]'
    )
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text('{"word_embedding_dimension": 384}')
    assert pooled_dim(tmp_path) is None  # a Dense layer after pooling may change the width


def test_index_with_only_prebuilt_vectors_builds_no_model(
    tmp_path: Path, small_snapshot: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from radar.app.cli import main
    from radar.index import embedder

    corpus = tmp_path / "small.jsonl.gz"
    corpus.write_bytes(small_snapshot.read_bytes())
    (tmp_path / "small_vectors.npz").write_bytes(SHIPPED_VECTORS.read_bytes())  # the snapshot's, beside the cut
    built: list[object] = []
    real_build = embedder.build_embedder

    def spy(*args: object, **kwargs: object) -> object:
        built.append(args)
        return real_build(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(embedder, "build_embedder", spy)
    root = str(tmp_path / "ws")
    assert main(["--workspace", root, "init"]) == 0
    assert main(["--workspace", root, "import", str(corpus)]) == 0
    capsys.readouterr()
    assert main(["--workspace", root, "index", "--json"]) == 0
    report = orjson.loads(capsys.readouterr().out)
    assert report["embedded"] == 0 and report["reused"] == 500, report
    assert built == []  # no model loaded, no ONNX export
    # a new paper needs the model: it is built then, once
    new = tmp_path / "new.jsonl"
    new.write_bytes(
        orjson.dumps(
            {
                "id": "2609.99999",
                "title": "A new paper",
                "abstract": "We study something new.",
                "authors": ["A. Author"],
                "categories": ["cs.LG"],
                "published": "2025-09-01",
            }
        )
        + b"\n"
    )
    assert main(["--workspace", root, "import", str(new)]) == 0
    capsys.readouterr()
    assert main(["--workspace", root, "index", "--json"]) == 0
    report = orjson.loads(capsys.readouterr().out)
    assert report["embedded"] == 1
    assert len(built) == 1


def test_the_demo_starts_no_export_when_the_model_cache_holds_it(tmp_path: Path, shared_model_cache: Path) -> None:
    from radar.app.cmd_core import _prepare_query_model
    from radar.app.context import Radar
    from radar.store import Workspace

    make_embedder(EmbeddingConfig(), device="cpu", cache_dir=shared_model_cache)  # exported (once per test run)
    ws, _ = Workspace.init(tmp_path / "ws")
    assert ws.model_cache_dir == shared_model_cache
    assert _prepare_query_model(Radar(ws)) is None  # no second process to spawn at every demo


def test_the_shipped_vectors_cover_every_snapshot_paper() -> None:
    """So that `radar import data/snapshot.jsonl.gz` then `radar index` embeds nothing and loads no model: an id the
    file holds twice (the snapshot's text and the bundled feed's) is found by its content, whichever comes last."""
    import gzip

    from radar.crawler.snapshot import record_to_document
    from radar.index.prebuilt import PrebuiltVectors

    with gzip.open(SHIPPED_VECTORS.with_name("snapshot.jsonl.gz"), "rb") as fh:
        docs = [record_to_document(orjson.loads(line)) for line in fh]
    vectors = PrebuiltVectors.open(SHIPPED_VECTORS)
    hits, found = vectors.take(vectors.model_id, [(d.id, d.content_hash) for d in docs])
    assert len(hits) == len(docs) == 20_000 and found.shape == (20_000, 384)


def test_the_demos_ahead_export_fails_with_an_exit_code_not_a_traceback(tmp_path: Path) -> None:
    """The demo's background export (its own process) ends with exit code 1 when it cannot export, so the demo
    says so in one line and the first search exports the model (or says why it cannot)."""
    import signal

    from radar.app.cmd_core import _export_model

    handler = signal.getsignal(signal.SIGINT)
    try:
        with pytest.raises(SystemExit) as stopped:
            _export_model(tmp_path / "no-model", tmp_path / "out", True)
    finally:
        signal.signal(signal.SIGINT, handler)  # the export ignores Ctrl-C (the demo's process handles it)
    assert stopped.value.code == 1
    assert not (tmp_path / "out" / "model_int8.onnx").exists()


def test_an_empty_saved_optimised_graph_is_made_again(tmp_path: Path) -> None:
    """A saved optimised graph emptied by a crash (ONNX Runtime: InvalidArgument) is removed and made again; the
    session runs."""
    import onnx
    from onnx import TensorProto, helper

    from radar.index.onnx_export import open_session, optimised_file

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 3])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "tiny", [x], [y])
    source = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), source)
    open_session(source, 1)
    saved = optimised_file(source)
    assert saved.stat().st_size > 0
    saved.write_bytes(b"")  # newer than the model: read, not made
    session = open_session(source, 1)
    (out,) = session.run(None, {"x": np.array([[-1.0, 0.0, 2.0]], dtype=np.float32)})
    assert out.tolist() == [[0.0, 0.0, 2.0]] and saved.stat().st_size > 0
