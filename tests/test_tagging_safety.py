"""The saved tag model cannot run code: a pickle planted in a workspace (the old model.pkl, or any file at the
model's path) is never unpickled by `radar tag`, `radar tag eval` or the review queue; each says so in one line
(the review queue simply retrains) and the model is retrained in the numpy + JSON format."""

from __future__ import annotations

import io
import json
import pickle
import shutil
import zipfile
from pathlib import Path

import msgspec
import numpy as np
import pytest

from radar.analysis.tags.config import TaggingConfig
from radar.analysis.tags.persist import ModelFileError, ModelHeader, StaleModelError, model_bytes, read_model
from radar.analysis.tags.tagger import Corpus, decide, fit_model
from radar.analysis.tags.taxonomy import DEFAULT_TAXONOMY, load_taxonomy_file
from radar.analysis.tags.training import Examples, shipped_papers
from radar.app import steps
from radar.app.context import Radar
from radar.store import Workspace
from tests.cli_helpers import run_cli

TAXONOMY = load_taxonomy_file(DEFAULT_TAXONOMY)


class Planted:
    """Unpickling this creates ``marker``: what a planted pickle could do instead is run any command."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return (open, (str(self.marker), "w"))


def plant(path: Path, marker: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps({"format": 4, "model": Planted(marker)}))


@pytest.fixture
def small_ws(indexed: Workspace, tmp_path: Path) -> Workspace:
    """A copy of the indexed workspace that trains on its own keywords only (no shipped labels): seconds."""
    root = tmp_path / "ws"
    shutil.copytree(indexed.root, root)
    ws = Workspace.open(root)
    ws.config_path.write_text(ws.config_path.read_text() + "\n[tagging]\nuse_dev_labels = false\n")
    return ws


def test_the_pickle_is_proven_live(tmp_path: Path) -> None:
    """The planted file does create the marker when unpickled: the tests below would notice if it were loaded."""
    marker = tmp_path / "marker"
    plant(tmp_path / "model.pkl", marker)
    pickle.loads((tmp_path / "model.pkl").read_bytes())  # noqa: S301 - the point of this check
    assert marker.exists()


def test_tag_eval_and_review_never_unpickle_a_planted_model(
    small_ws: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws, marker = small_ws, tmp_path / "marker"
    new, old = ws.tag_model_path, ws.legacy_tag_model_path
    assert new.suffix == ".npz" and old.name == "model.pkl"
    plant(old, marker)  # an old-format model, or one planted under its name
    res = run_cli(capsys, "--workspace", str(ws.root), "tag")
    assert res.code == 0, res.err
    assert not marker.exists()
    notes = [line for line in res.err.splitlines() if "old pickle format" in line]
    assert len(notes) == 1 and "retrained" in notes[0]
    assert new.is_file() and not old.exists()  # retrained as .npz; the pickle is gone, the note is said once
    again = run_cli(capsys, "--workspace", str(ws.root), "tag", "--json").json()
    assert again["trained"] is False and again["notes"] == []

    plant(new, marker)  # a pickle at the new path
    labels = tmp_path / "labels.jsonl"
    with ws.store() as store:
        ids = [r[0] for r in store.conn.execute("SELECT id FROM documents ORDER BY id LIMIT 5")]
    labels.write_text("".join(json.dumps({"id": i, "tags": []}) + "\n" for i in ids))
    res = run_cli(capsys, "--workspace", str(ws.root), "tag", "eval", str(labels), "--json")
    assert res.code == 0, res.err
    assert not marker.exists()
    lines = [line for line in res.err.splitlines() if "not a tag model radar wrote" in line]
    assert len(lines) == 1 and str(new) in lines[0]

    plant(new, marker)
    assert steps.review_queue(Radar(ws), k=3)  # the dashboard's review queue retrains rather than load it
    assert not marker.exists()
    res = run_cli(capsys, "--workspace", str(ws.root), "tag", "--json")
    assert res.code == 0 and res.json()["trained"] is False  # what the review queue saved is used

    ws.config_path.write_text(ws.config_path.read_text() + "min_examples = 6\n")  # [tagging] is the last table
    res = run_cli(capsys, "--workspace", str(ws.root), "tag", "--json")
    assert res.code == 0 and res.json()["trained"] is True and res.json()["notes"] == []  # stale: retrained quietly


def _small_model() -> tuple[Examples, object]:
    papers = shipped_papers()
    ids = sorted(papers)[:120]
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(len(ids), 8)).astype(np.float32)
    y = rng.random((len(ids), len(TAXONOMY.names))) < 0.3
    examples = Examples(
        ids,
        [papers[i][0] for i in ids],
        [papers[i][1] for i in ids],
        vectors,
        y,
        np.ones_like(y),
        np.ones(y.shape, dtype=np.float32),
        np.zeros(len(ids), dtype=bool),
    )
    cfg = TaggingConfig()
    model = fit_model(examples, TAXONOMY, cfg, Corpus(), lambda texts: np.ones((len(texts), 8), np.float32))
    return examples, model


def test_a_saved_model_scores_as_the_trained_one_and_bad_files_are_refused(tmp_path: Path) -> None:
    examples, model = _small_model()
    header = ModelHeader(4, TAXONOMY.digest, "m", "c")
    path = tmp_path / "model.npz"
    path.write_bytes(model_bytes(model, header))
    loaded = read_model(path, header, TAXONOMY)
    args = (examples.titles[:30], examples.abstracts[:30], examples.vectors[:30])
    assert np.allclose(decide(loaded, *args), decide(model, *args), atol=1e-5)  # type: ignore[arg-type]
    assert loaded.version == model.version and loaded.thresholds().tolist() == model.thresholds().tolist()  # type: ignore[attr-defined]
    with pytest.raises(StaleModelError, match="trained for another"):  # retrained without a note
        read_model(path, msgspec.structs.replace(header, config="other"), TAXONOMY)
    with np.load(path, allow_pickle=False) as saved:  # the spec as the code before msgspec wrote it (json.dumps)
        arrays = {k: saved[k] for k in saved.files}
    spec = json.loads(str(arrays["spec"]))
    assert str(arrays["spec"]) == json.dumps(spec)
    assert list(spec) == [
        "format",
        "taxonomy",
        "model_id",
        "config",
        "features",
        "tfidf",
        "dim",
        "names",
        "version",
        "rules",
    ]
    assert all(list(r)[:3] == ["strategy", "threshold", "positives"] and len(r) == 4 for r in spec["rules"].values())
    del spec["format"]  # a spec of a format before the header's: retrained quietly, not a damaged file
    buf = io.BytesIO()
    np.savez(buf, **{**arrays, "spec": np.array(json.dumps(spec))})
    path.write_bytes(buf.getvalue())
    with pytest.raises(StaleModelError):
        read_model(path, header, TAXONOMY)

    marker = tmp_path / "marker"
    plant(path, marker)  # a pickle where the model belongs
    with pytest.raises(ModelFileError, match="not a numpy archive"):
        read_model(path, header, TAXONOMY)
    buf = io.BytesIO()  # an archive whose "spec" is an object array: loading it would need a pickle
    np.savez(buf, spec=np.array([Planted(marker)], dtype=object))
    path.write_bytes(buf.getvalue())
    with pytest.raises(ModelFileError, match="not a numpy archive"):
        read_model(path, header, TAXONOMY)
    np.save(tmp_path / "one.npy", np.zeros(3))  # a lone array
    (tmp_path / "one.npy").replace(path)
    with pytest.raises(ModelFileError, match="single numpy array"):
        read_model(path, header, TAXONOMY)
    with zipfile.ZipFile(path, "w") as z:  # an archive whose spec is not JSON
        z.writestr("spec.npy", b"garbage")
    with pytest.raises(ModelFileError):
        read_model(path, header, TAXONOMY)
    assert not marker.exists()
