"""The parts of a trends answer kept between calls (analysis/trends/parts.py): a call whose inputs did not change
reads them back and recomputes nothing (not even the term table is read); a part whose inputs changed is computed
again, the others are read; what is read back is what computing gives, on a synthetic corpus with tags, vectors
(topics) and method cards."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest

from radar.analysis.contributions.table import Contributions
from radar.analysis.trends.compute import TrendsEnv, compute_trends
from radar.analysis.trends.parts import KEEP, Parts
from radar.app import wiring
from radar.app.context import Radar
from radar.crawler.documents import Documents
from radar.index.embeddings import Embeddings
from radar.store import Store, Workspace
from tests.conftest import ROOT
from tests.trends_data import base_corpus, make_doc, noisy_vectors, tag

AS_OF = date(2025, 6, 30)
STAGES = ("app", "crawler", "data", "index", "reports", "repro", "store")


def _env(ws: Workspace, store: Store) -> TrendsEnv:
    return wiring.trends_env(Radar(ws), store)


def _trends(env: TrendsEnv, store: Store, **kwargs: Any) -> dict[str, Any]:
    return msgspec.to_builtins(compute_trends(store, env, as_of=AS_OF, window="month", **kwargs))


def _computed(ws: Workspace, store: Store) -> dict[str, Any]:
    """The answer computed afresh, nothing read back."""
    return _trends(replace(_env(ws, store), parts_dir=None), store)


def _files(ws: Workspace, part: str) -> list[str]:
    return sorted(p.name for p in ws.trends_parts_dir.glob(f"{part}-*.json"))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The synthetic corpus with vectors, tags and its contributions decided, before any trends call."""
    from radar.app import steps_contributions
    from radar.index.embedder import model_id_for, resolve_model_dir
    from tests.conftest import DEFAULT_CONFIG_TEXT

    ws, _ = Workspace.init(tmp_path_factory.mktemp("parts") / "ws", config_text=DEFAULT_CONFIG_TEXT)
    cfg = Radar(ws).settings.embedding
    with ws.store() as store:
        base_corpus(store)
        noisy_vectors(store, model_id_for(cfg, resolve_model_dir(cfg.model), int8=True), 0.3)
        ids = [d.id for d in Documents(store).scan(since="2025-05-01")]
        tag(store, [(d, "rl-policy-optimization") for d in ids[::3]])
        steps_contributions.refresh(Radar(ws), store)
    return ws


@pytest.fixture
def corpus(built: Workspace, tmp_path: Path) -> Workspace:
    shutil.copytree(built.root, tmp_path / "ws")
    return Workspace.open(tmp_path / "ws")


def test_a_warm_call_recomputes_nothing(corpus: Workspace) -> None:
    def fail(since: str, until: str) -> list[Any]:
        raise AssertionError("the method cards were computed again")

    with corpus.store() as store:
        cold = _trends(_env(corpus, store), store)
        assert cold["topics"] and cold["tag_trends"] and cold["emerging"]  # every part holds something
        assert cold == _computed(corpus, store)
        corpus.term_cache_path.unlink()  # a call that needed the term table would rebuild it
        registry = corpus.topics_dir / "registry-month.npz"
        stamp = registry.stat().st_mtime_ns
        warm = _trends(replace(_env(corpus, store), introductions=fail), store)
    assert warm == cold
    assert not corpus.term_cache_path.exists() and registry.stat().st_mtime_ns == stamp
    assert all(len(_files(corpus, p)) == 1 for p in ("frame", "terms", "tags", "topics", "methods"))


def test_a_part_whose_inputs_changed_is_computed_again_and_only_it(corpus: Workspace) -> None:
    with corpus.store() as store:
        _trends(_env(corpus, store), store)
        ids = [d.id for d in Documents(store).scan(since="2025-06-01")]
        tag(store, [(d, "llm-reasoning") for d in ids[::2]])  # the tags changed: the tag series only
        retagged = _trends(_env(corpus, store), store)
        assert retagged == _computed(corpus, store)
        assert len(_files(corpus, "tags")) == 2 and len(_files(corpus, "terms")) == 1
        assert len(_files(corpus, "topics")) == 1 and len(_files(corpus, "frame")) == 1
        noisy_vectors(store, Embeddings(store).models().popitem()[0], 1.6)  # new vectors: the topics again
        moved = _trends(_env(corpus, store), store)
        assert moved == _computed(corpus, store) and len(_files(corpus, "topics")) == 2
        new = make_doc(random.Random(0), "2506.99999", date(2025, 6, 20), "arxiv", "cs.LG", ["zorpo method"])
        Documents(store).upsert([new])
        added = _trends(_env(corpus, store), store)  # a new document: every part
        assert added == _computed(corpus, store)
    assert all(len(_files(corpus, p)) >= 2 for p in ("frame", "terms", "tags", "topics", "methods"))
    assert added["recent"]["documents"] == moved["recent"]["documents"] + 1


def test_a_damaged_or_foreign_part_is_computed_again(corpus: Workspace) -> None:
    with corpus.store() as store:
        cold = _trends(_env(corpus, store), store)
        (terms,) = corpus.trends_parts_dir.glob("terms-*.json")
        terms.write_text("{cut short")
        (tags,) = corpus.trends_parts_dir.glob("tags-*.json")
        tags.write_text('{"key": "another key", "value": {"tags": {}}}')  # a hash collision is a miss
        assert _trends(_env(corpus, store), store) == cold


def test_a_part_of_another_shape_is_computed_again(corpus: Workspace) -> None:
    """A part under its own key whose value is not what the code reads (written by other code, or damaged) is a
    miss, not a KeyError."""
    with corpus.store() as store:
        cold = _trends(_env(corpus, store), store)
        for part, value in [("terms", {"emerging": []}), ("tags", {"tags": [], "groups": {}}), ("frame", [1])]:
            (path,) = corpus.trends_parts_dir.glob(f"{part}-*.json")
            saved = json.loads(path.read_text())
            path.write_text(json.dumps({"key": saved["key"], "value": value}))
        (methods,) = corpus.trends_parts_dir.glob("methods-*.json")
        saved = json.loads(methods.read_text())
        methods.write_text(json.dumps({"key": saved["key"], "value": [{"name": "x"}]}))
        assert _trends(_env(corpus, store), store) == cold


def test_a_part_computed_by_other_code_is_not_read_back(corpus: Workspace, tmp_path: Path) -> None:
    """An upgrade that changes the trends stage's code (here: emerging.py) or what the method cards read computes
    every part again, in a process of the new code."""
    src = tmp_path / "src"
    (src / "radar").mkdir(parents=True)
    shutil.copy(ROOT / "radar" / "__init__.py", src / "radar" / "__init__.py")
    shutil.copytree(ROOT / "analysis", src / "analysis", ignore=shutil.ignore_patterns("__pycache__"))
    (src / "radar" / "analysis").symlink_to(src / "analysis")
    for stage in STAGES:
        (src / "radar" / stage).symlink_to(ROOT / stage)
    code = (
        "import sys\n"
        "from datetime import date\n"
        "from radar.analysis.trends.compute import compute_trends\n"
        "from radar.app import wiring\n"
        "from radar.app.context import Radar\n"
        "from radar.store import Workspace\n"
        "from pathlib import Path\n"
        f"ws = Workspace.open(Path({str(corpus.root)!r}))\n"
        "with ws.store() as store:\n"
        f"    compute_trends(store, wiring.trends_env(Radar(ws), store), as_of=date(2025, 6, 30), window='month')\n"
        "print(sys.modules['radar.analysis.trends.emerging'].__file__)\n"
    )

    def run() -> str:
        env = {**os.environ, "PYTHONPATH": str(src)}
        done = subprocess.run([sys.executable, "-c", code], cwd=src, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    with corpus.store() as store:
        _trends(_env(corpus, store), store)
    assert run().strip() == str(src / "radar" / "analysis" / "trends" / "emerging.py")  # the copy's code runs
    assert all(len(_files(corpus, p)) == 1 for p in ("frame", "terms", "tags", "topics", "methods"))  # the same code
    emerging = src / "analysis" / "trends" / "emerging.py"
    emerging.write_text(emerging.read_text() + "\n# an upgrade\n")
    run()
    assert all(len(_files(corpus, p)) == 2 for p in ("frame", "terms", "tags", "topics", "methods"))
    model = src / "analysis" / "contributions" / "cards.py"
    model.write_text(model.read_text() + "\n# an upgrade\n")
    run()
    assert all(len(_files(corpus, p)) == 3 for p in ("frame", "terms", "tags", "topics", "methods"))

    def rules() -> str:
        with np.load(corpus.term_cache_path) as saved:
            return str(json.loads(bytes(saved["meta"]))["rules"])

    before = rules()
    stop = src / "analysis" / "trends" / "stop_words.py"
    stop.write_text(stop.read_text().replace('"about",', '"about", "zorpo",', 1))
    run()  # other stop words: other terms, so the term cache is built again too
    assert rules() != before and len(_files(corpus, "terms")) == 4


def test_new_methods_read_while_contributions_change_are_not_kept(corpus: Workspace) -> None:
    """Another process writing contributions while the cards are read: what was read is not kept under the
    version after it (the next call would read it back as current)."""
    with corpus.store() as store:
        env = _env(corpus, store)
        cards = env.introductions
        assert cards is not None
        first = next(iter(Contributions(store).contribution_models()))
        some = Contributions(store).introductions()[0].doc_id

        def racing(since: str, until: str) -> list[Any]:
            found = cards(since, until)
            Contributions(store).set_rewritten_changes({some: f"rewritten by another process ({first})"})
            return found

        _trends(replace(env, introductions=racing), store)
        assert _files(corpus, "methods") == []
        assert _trends(_env(corpus, store), store) == _computed(corpus, store)
        assert len(_files(corpus, "methods")) == 1


def test_pruning_skips_a_part_file_another_process_removed(tmp_path: Path) -> None:
    """A file listed, then gone when its time is read (another process pruned it; here a link to nothing):
    pruning goes on."""
    parts = Parts(tmp_path, ["inputs"])
    (tmp_path / "terms-gone.json").symlink_to(tmp_path / "nothing")
    for i in range(KEEP + 2):
        parts.save("terms", [str(i)], {"i": i})
    assert parts.load("terms", [str(KEEP + 1)]) == {"i": KEEP + 1}
    assert parts.load("terms", ["0"]) is None
    assert len([p for p in tmp_path.glob("terms-*.json") if p.exists()]) == KEEP


def test_the_tags_z_bar_is_scipys_normal_quantile() -> None:
    """tag_z computes norm.isf without importing scipy.stats: the same value, bit for bit."""
    from scipy.stats import norm

    from radar.analysis.trends.series import tag_z

    for alpha in np.linspace(1e-6, 0.5, 199):
        for n in (0, 1, 3, 10, 37):
            assert tag_z(float(alpha), n) == float(norm.isf(alpha / (2 * max(n, 1))))
