"""The parts of a trends answer kept between calls (analysis/trends/parts.py): a call whose inputs did not change
reads them back and recomputes nothing (not even the term table is read); a part whose inputs changed is computed
again, the others are read; what is read back is what computing gives, on a synthetic corpus with tags, vectors
(topics) and method cards."""

from __future__ import annotations

import random
import shutil
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from radar.analysis.trends.compute import TrendsEnv, compute_trends
from radar.app import wiring
from radar.app.context import Radar
from radar.store import Store, Workspace
from tests.trends_data import base_corpus, make_doc, noisy_vectors, tag

AS_OF = date(2025, 6, 30)


def _env(ws: Workspace, store: Store) -> TrendsEnv:
    return wiring.trends_env(Radar(ws), store)


def _trends(env: TrendsEnv, store: Store, **kwargs: Any) -> dict[str, Any]:
    return compute_trends(store, env, as_of=AS_OF, window="month", **kwargs).as_dict()


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
        ids = [d.id for d in store.iter_documents(since="2025-05-01")]
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
        ids = [d.id for d in store.iter_documents(since="2025-06-01")]
        tag(store, [(d, "llm-reasoning") for d in ids[::2]])  # the tags changed: the tag series only
        retagged = _trends(_env(corpus, store), store)
        assert retagged == _computed(corpus, store)
        assert len(_files(corpus, "tags")) == 2 and len(_files(corpus, "terms")) == 1
        assert len(_files(corpus, "topics")) == 1 and len(_files(corpus, "frame")) == 1
        noisy_vectors(store, store.embedding_models().popitem()[0], 1.6)  # new vectors: the topics again
        moved = _trends(_env(corpus, store), store)
        assert moved == _computed(corpus, store) and len(_files(corpus, "topics")) == 2
        new = make_doc(random.Random(0), "2506.99999", date(2025, 6, 20), "arxiv", "cs.LG", ["zorpo method"])
        store.upsert_documents([new])
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


def test_the_tags_z_bar_is_scipys_normal_quantile() -> None:
    """tag_z computes norm.isf without importing scipy.stats: the same value, bit for bit."""
    from scipy.stats import norm

    from radar.analysis.trends.series import tag_z

    for alpha in np.linspace(1e-6, 0.5, 199):
        for n in (0, 1, 3, 10, 37):
            assert tag_z(float(alpha), n) == float(norm.isf(alpha / (2 * max(n, 1))))
