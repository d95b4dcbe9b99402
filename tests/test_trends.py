"""Trends on synthetic corpora: rises flagged, flat terms and source-mix changes not, --as-of
isolation, cache invalidation, stable topic ids."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date
from typing import Any

import msgspec
import numpy as np
import pytest

from radar.analysis.contributions.table import Contributions
from radar.analysis.trends.cache import term_table
from radar.analysis.trends.compute import TrendsEnv, compute_trends
from radar.analysis.trends.config import TrendsConfig
from radar.analysis.trends.stats import fixed_effect_shares, kleinberg_active, stratified_test
from radar.analysis.trends.terms import document_terms
from radar.app import steps_contributions, wiring
from radar.app.context import Radar
from radar.crawler.documents import Documents
from radar.index.embeddings import Embeddings
from radar.store import Store, Workspace
from tests.trends_data import (
    base_corpus,
    continuing_corpus,
    generic_rise,
    model_family,
    new_source,
    noisy_vectors,
    pixel_lattice_in_base,
    tag,
)


def env_of(ws: Workspace, store: Store) -> TrendsEnv:
    """The trends stage's environment as `radar trends` builds it: the contributions the new methods read brought
    up to date first (trends only read)."""
    steps_contributions.refresh(Radar(ws), store)
    return wiring.trends_env(Radar(ws), store)


def trends_of(ws: Workspace, store: Store, **kwargs: Any) -> dict[str, Any]:
    """The trends stage as the composition root wires it, as the `radar trends --json` document, computed: not read
    back from the parts kept of earlier calls (what these tests check is the computation; the kept parts are
    tests/test_trends_parts.py's)."""
    env = replace(env_of(ws, store), parts_dir=None)
    return msgspec.to_builtins(compute_trends(store, env, **kwargs))


AS_OF = date(2025, 6, 30)


def _terms(result: dict, key: str = "emerging") -> set[str]:
    return {t.lower() for e in result[key] for t in [e["term"], *e["aliases"]]}


@pytest.fixture
def corpus_ws(workspace: Workspace) -> Workspace:
    with workspace.store() as store:
        base_corpus(store)
    return workspace


def test_terms_fold_merge_and_filter() -> None:
    title = "DAPO: Group Relative Policy Optimization (GRPO) for LLMs"
    keys = document_terms(title, "We systematically bridge this gap with test-time scaling and Qwen2.5-7B-Instruct.")
    assert {"@DAPO", "@GRPO", "@Qwen2.5", "relative policy optimization", "test time scaling"} <= keys
    assert "@LLM" not in keys and "llm" in keys  # a generic acronym is a term, not a method name
    assert not {"systematically", "bridge this gap", "this gap"} & keys  # adverbs, inner stop-words


def test_rising_term_flagged_flat_term_not(corpus_ws: Workspace) -> None:
    with corpus_ws.store() as store:
        result = trends_of(corpus_ws, store, as_of=AS_OF, window="month")
    emerging = _terms(result)
    assert "quantum sparsifier" in emerging
    assert not any("steady morphing" in t or t in {"steady", "morphing"} for t in emerging)
    top = next(e for e in result["emerging"] if "quantum sparsifier" in {e["term"], *e["aliases"]})
    assert top["recent_share"] > 5 * top["baseline_share"] and top["burst"]["active"]
    assert top["first_seen"] == "2025-01-01" or top["first_seen"] < "2025-02-01"
    zorpo = next(m for m in result["new_methods"] if m["name"] == "ZORPO")
    assert zorpo["first_seen"] >= "2025-06-01" and zorpo["count"] == zorpo["recent_count"] > 5
    assert result["new_methods"][0]["first_id"]


def test_generic_word_rising_in_unrelated_documents_is_not_emerging(corpus_ws: Workspace) -> None:
    """The word "wuggle" jumps from 0 to 30% of June's documents, whatever they are about; "quantum sparsifier"
    rises as sharply in documents that also share its topic's words. Both pass the count test; only the
    coherent one is emerging, and with the coherence check off the generic word is listed (the check
    is what removes it)."""
    with corpus_ws.store() as store:
        generic_rise(store)
        result = trends_of(corpus_ws, store, as_of=AS_OF, window="month")
        unchecked = trends_of(corpus_ws, store, as_of=AS_OF, window="month", cfg=TrendsConfig(min_coherence_z=0))
    assert "wuggle" in _terms(unchecked) and "quantum sparsifier" in _terms(unchecked)
    assert "wuggle" not in _terms(result)
    assert "quantum sparsifier" in _terms(result)
    item = next(e for e in result["emerging"] if "quantum sparsifier" in {e["term"], *e["aliases"]})
    coherence = item["coherence"]
    assert coherence["lift"] >= 1.5 and coherence["z"] >= 3 and coherence["value"] > coherence["random"] > 0
    assert all(e["coherence"] is None for e in unchecked["emerging"])


def test_week_window_and_declines(workspace: Workspace) -> None:
    with workspace.store() as store:  # the "rise" reversed: quantum sparsifier falls away in June
        base_corpus(store, rise_from=date(2099, 1, 1))
        result = trends_of(workspace, store, as_of=AS_OF, window="week")
    assert result["window"] == "week" and result["recent"]["start"] == "2025-06-24"
    assert "quantum sparsifier" not in _terms(result)


def test_source_mix_change_is_not_a_trend(corpus_ws: Workspace) -> None:
    """A new source adds many cs.CV documents in June, half about "pixel lattice" (which the first
    source uses at a steady 3%), and a tag that fits its documents: neither may read as emerging."""
    with corpus_ws.store() as store:
        pixel_lattice_in_base(store)
        new_ids = new_source(store)
        base_ids = [d.id for d in Documents(store).scan() if d.source == "feed-a"]
        tag(store, [(i, "vision") for i in new_ids[::2]] + [(i, "vision") for i in base_ids[::20]])
        radar = trends_of(corpus_ws, store, as_of=AS_OF, window="month")
        naive = trends_of(corpus_ws, store, as_of=AS_OF, window="month", cfg=TrendsConfig(stratify=False))
    assert "pixel lattice" not in _terms(radar)
    assert "pixel lattice" in _terms(naive)  # the same test on raw shares is fooled: the check can fail
    assert "vora-1" not in _terms(radar)  # a model family new with the source is no launch either ...
    assert "vora-1" in _terms(naive)  # ... though on raw shares it passes the family launch rule
    assert "quantum sparsifier" in _terms(radar)  # a real rise inside the old source still shows
    vision = {t["tag"]: t for t in radar["tag_trends"]}["vision"]
    assert vision["direction"] == "flat"
    assert {t["tag"]: t for t in naive["tag_trends"]}["vision"]["direction"] == "rising"
    june = radar["tags"]["vision"][-1]
    assert june["raw_share"] > 3 * radar["tags"]["vision"][-2]["raw_share"]  # raw share jumps ...
    assert june["share"] == pytest.approx(radar["tags"]["vision"][-2]["share"], rel=0.6)  # ... the mix-free one not


def test_as_of_ignores_later_documents(corpus_ws: Workspace) -> None:
    as_of = date(2025, 5, 31)
    with corpus_ws.store() as store:
        before = trends_of(corpus_ws, store, as_of=as_of, window="month")
        new_source(store, first=date(2025, 6, 1), last=date(2025, 6, 3))  # later documents, new terms
        after = trends_of(corpus_ws, store, as_of=as_of, window="month")
    assert before == after
    assert before["as_of"] == "2025-05-31"
    assert all(m["first_seen"] <= "2025-05-31" for m in before["new_methods"])
    assert not any(m["name"] == "ZORPO" for m in before["new_methods"])  # first used in June


def test_cache_is_reused_and_invalidated(corpus_ws: Workspace) -> None:
    with corpus_ws.store() as store:
        first = term_table(corpus_ws.term_cache_path, store)
        again = term_table(corpus_ws.term_cache_path, store)
        assert again.fingerprint == first.fingerprint and again.matrix.nnz == first.matrix.nnz
        doc = next(Documents(store).scan())
        Documents(store).upsert([replace(doc, abstract="A flibbertigibbet regularizer.")])
        changed = term_table(corpus_ws.term_cache_path, store)
        col = changed.column("flibbertigibbet regularizer")
        assert col is not None and changed.matrix[:, col].sum() == 1
        row = changed.ids.index(doc.id)
        assert changed.matrix[row].nnz < first.matrix[first.ids.index(doc.id)].nnz  # old terms gone
        with store.transaction() as conn:  # a deletion rebuilds from scratch
            conn.execute("DELETE FROM documents WHERE id = ?", (doc.id,))
        rebuilt = term_table(corpus_ws.term_cache_path, store)
    assert doc.id not in rebuilt.ids and len(rebuilt.ids) == len(first.ids) - 1
    assert (
        rebuilt.column("flibbertigibbet regularizer") is None
        or rebuilt.matrix[:, rebuilt.column("flibbertigibbet regularizer")].sum() == 0
    )


def test_topic_ids_stable_a_week_later(corpus_ws: Workspace) -> None:
    """Synthetic vectors around 6 centres (real model id); recomputing a week later keeps the ids."""
    from radar.index.embedder import model_id_for, resolve_model_dir

    cfg = Radar(corpus_ws).settings.embedding
    model = model_id_for(cfg, resolve_model_dir(cfg.model), int8=True)
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(6, 384)).astype(np.float32)
    with corpus_ws.store() as store:
        docs = list(Documents(store).scan(since="2025-03-01"))
        rows = []
        for i, d in enumerate(docs):
            v = centres[i % 6] + 0.3 * rng.normal(size=384).astype(np.float32)
            rows.append((d.id, model, d.content_hash, (v / np.linalg.norm(v)).astype(np.float32).tobytes()))
        Embeddings(store).save(rows)
        first = trends_of(corpus_ws, store, as_of=date(2025, 6, 15), window="week")
        later = trends_of(corpus_ws, store, as_of=date(2025, 6, 22), window="week")
        again = trends_of(corpus_ws, store, as_of=date(2025, 6, 22), window="week")
    assert first["topics"] and not first["topics_note"]
    assert json.loads(json.dumps(first)) == first  # plain JSON types only (the report and dashboard read it)
    ids_first = {t["id"] for t in first["topics"]}
    ids_later = {t["id"] for t in later["topics"]}
    assert len(ids_first & ids_later) >= 0.8 * len(ids_first)
    assert again["topics"] == later["topics"]  # same as_of, same answer
    assert (corpus_ws.index_dir / "topics" / "registry-week.npz").is_file()
    for t in first["topics"]:
        assert t["size"] >= t["recent_size"] >= 0 and t["keywords"] and len(t["example_ids"]) <= 3


def _noisy_vectors(ws: Workspace, store: Store, noise: float) -> None:
    """Vectors around 8 centres with enough noise that where k-means starts decides where it ends."""
    from radar.index.embedder import model_id_for, resolve_model_dir

    cfg = Radar(ws).settings.embedding
    noisy_vectors(store, model_id_for(cfg, resolve_model_dir(cfg.model), int8=True), noise)


def test_the_same_data_gives_the_same_topics_whatever_ran_before(corpus_ws: Workspace) -> None:
    """Two runs of one command on the same data give the same topics, ids and sizes, with other as-of days computed
    in between (each run used to start k-means from the newest earlier run's centroids, so it depended on which
    runs had been made: t13 with 278 papers, then t4 with 216); a week later keeps most ids."""
    import shutil

    def topics(store: Store, day: date) -> list[tuple[str, str, int, int]]:
        found = trends_of(corpus_ws, store, as_of=day, window="week")["topics"]
        return [(t["id"], t["label"], t["size"], t["recent_size"]) for t in found]

    with corpus_ws.store() as store:
        _noisy_vectors(corpus_ws, store, noise=1.6)
        first = topics(store, date(2025, 6, 22))
        for day in (date(2025, 6, 8), date(2025, 6, 19), date(2025, 6, 29), date(2025, 6, 15)):
            topics(store, day)  # other days, computed in between, each leaving its state
        again = topics(store, date(2025, 6, 22))
        week_later = topics(store, date(2025, 6, 29))
        shutil.rmtree(corpus_ws.topics_dir)  # a fresh workspace with the same data
        fresh = topics(store, date(2025, 6, 22))
    assert len(first) >= 4
    assert again == first
    assert [t[1:] for t in fresh] == [t[1:] for t in first] and [t[0] for t in fresh] == [t[0] for t in first]
    kept = {t[0] for t in first} & {t[0] for t in week_later}
    assert len(kept) >= 0.75 * len(first)


def test_stratified_test_ignores_new_strata() -> None:
    # stratum 0: steady 10% in both windows; stratum 1: new, 50% but no baseline
    a = np.array([[10.0], [50.0]])
    b = np.array([[60.0], [0.0]])
    n, m = np.array([100.0, 100.0]), np.array([600.0, 0.0])
    t = stratified_test(a, n, b, m, min_stratum_docs=20)
    assert abs(t.z[0]) < 1 and t.ratio[0] == pytest.approx(1.0, abs=0.1)
    pooled = stratified_test(
        a.sum(0, keepdims=True), n.sum(keepdims=True), b.sum(0, keepdims=True), m.sum(keepdims=True), 20
    )
    assert pooled.z[0] > 5  # what ignoring strata would say


def test_mix_free_shares_and_bursts() -> None:
    docs = np.array([[100.0, 0.0], [100.0, 0.0], [100.0, 400.0], [100.0, 400.0]])  # a stratum appears
    counts = np.array([[10.0, 0.0], [10.0, 0.0], [10.0, 200.0], [10.0, 200.0]])  # rates 10% and 50%
    shares = fixed_effect_shares(counts, docs)
    assert np.allclose(shares, shares[0], rtol=1e-6)  # no change inside either stratum: flat
    series = np.array([[1.0], [1.0], [1.0], [1.0], [1.0], [9.0]])
    active, start = kleinberg_active(series, np.full(6, 100.0), np.full((6, 1), 0.02))
    assert active[0] and start[0] == 5
    flat, _ = kleinberg_active(np.full((6, 1), 2.0), np.full(6, 100.0), np.full((6, 1), 0.02))
    assert not flat[0]


def test_incremental_cache_equals_a_fresh_build(corpus_ws: Workspace) -> None:
    def rows(table):  # type: ignore[no-untyped-def]
        return {doc_id: {table.term(int(c)) for c in table.matrix[i].indices} for i, doc_id in enumerate(table.ids)}

    with corpus_ws.store() as store:
        term_table(corpus_ws.term_cache_path, store)
        new_source(store, first=date(2025, 6, 1), last=date(2025, 6, 5))
        updated = term_table(corpus_ws.term_cache_path, store)
        (corpus_ws.index_dir / "trends" / "terms.npz").unlink()
        fresh = term_table(corpus_ws.term_cache_path, store)
    assert rows(updated) == rows(fresh)
    assert list(updated.day) == list(fresh.day) and updated.ids == fresh.ids
    for key in ("pixel lattice", "quantum sparsifier", "@ZORPO"):
        col_u, col_f = updated.column(key), fresh.column(key)
        assert col_u is not None and col_f is not None
        assert updated.readable(col_u) == fresh.readable(col_f)
        assert updated.ids[updated.first_row[col_u]] == fresh.ids[fresh.first_row[col_f]]


def test_a_significant_change_in_a_tags_share_is_rising_or_falling() -> None:
    """The 2025-03-31 replay's rl-policy-optimization: 4.60% -> 8.01% of documents is a rise, not "flat"."""
    from radar.analysis.trends.series import tag_direction, tag_z

    z_needed = tag_z(0.05, 10)
    assert 2.7 < z_needed < 2.9  # two-sided 5% over ten tags
    n, m = 2500.0, 7500.0  # a month's documents against a three-month baseline
    rise = stratified_test(np.array([[0.0801 * n]]), np.array([n]), np.array([[0.046 * m]]), np.array([m]), 10)
    assert tag_direction(float(rise.z[0]), float(rise.ratio[0]), z_needed) == "rising"
    fall = stratified_test(np.array([[0.046 * n]]), np.array([n]), np.array([[0.0801 * m]]), np.array([m]), 10)
    assert tag_direction(float(fall.z[0]), float(fall.ratio[0]), z_needed) == "falling"
    same = stratified_test(np.array([[0.05 * n]]), np.array([n]), np.array([[0.049 * m]]), np.array([m]), 10)
    assert tag_direction(float(same.z[0]), float(same.ratio[0]), z_needed) == "flat"


def test_tag_trend_rule_false_alarm_rate_under_no_change() -> None:
    """Simulation: ten tags whose shares do not change between baseline and recent windows (two strata of
    different sizes and rates). The rule's family-wise rate of calling any tag rising/falling must stay
    near tag_alpha (5%): measured over 1,000 simulated months, with its binomial error."""
    from radar.analysis.trends.series import tag_direction, tag_z

    rng = np.random.default_rng(7)
    n, m = np.array([1500.0, 900.0]), np.array([4500.0, 2700.0])  # recent / baseline documents per stratum
    shares = rng.uniform(0.02, 0.10, size=(2, 10))  # per stratum and tag, the same in both windows
    z_needed = tag_z(0.05, 10)
    trials, alarms = 1000, 0
    for _ in range(trials):
        a = rng.binomial(n[:, None].astype(int), shares).astype(float)
        b = rng.binomial(m[:, None].astype(int), shares).astype(float)
        test = stratified_test(a, n, b, m, 10)
        calls = [tag_direction(float(z), float(r), z_needed) for z, r in zip(test.z, test.ratio, strict=True)]
        alarms += any(c != "flat" for c in calls)
    rate = alarms / trials
    assert rate <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / trials), rate  # <= 5% within two simulation errors


BEFORE = TrendsConfig(rise_periods=1, families=False)  # the rules before continuing rises and families


def test_a_rise_that_continues_stays_emerging(workspace: Workspace) -> None:
    """ "quantum sparsifier" goes from 2% to 20% of documents on 1 June and stays there. In July and August
    the plain baseline holds its own high months and the rise fades from the list; compared with the
    baseline before its burst it stays emerging (and it was a rise when it began)."""
    with workspace.store() as store:
        continuing_corpus(store)
        found = {m: trends_of(workspace, store, as_of=date(2025, m, 30 + (m != 6)), window="month") for m in (6, 7, 8)}
        before = trends_of(workspace, store, as_of=date(2025, 8, 31), window="month", cfg=BEFORE)
    for month, result in found.items():
        assert "quantum sparsifier" in _terms(result), month
    item = next(e for e in found[8]["emerging"] if "quantum sparsifier" in {e["term"], *e["aliases"]})
    assert item["rule"] == "continuing rise" and item["baseline_end"] == "2025-05-31"
    assert "quantum sparsifier" not in _terms(before)  # the old rule loses it in the rise's third month
    assert not any("steady morphing" in t for r in found.values() for t in _terms(r))


def test_family_launch_and_successor_decline(corpus_ws: Workspace) -> None:
    """Zeta-3 launches in June over three variants in documents about anything (each variant alone is
    a small, incoherent rise); Zeta-2 fell from 20% to 4% of documents. The family is emerging as a
    launch, Zeta-2 declining with Zeta-3 named as its successor; neither without the family rules."""
    with corpus_ws.store() as store:
        model_family(store)
        result = trends_of(corpus_ws, store, as_of=AS_OF, window="month")
        before = trends_of(corpus_ws, store, as_of=AS_OF, window="month", cfg=BEFORE)
    launch = next(e for e in result["emerging"] if e.get("family") == "zeta3")
    assert launch["rule"] == "family launch" and {"Zeta-3", "Zeta-3-VL", "Zeta-3-Coder"} == {
        launch["term"],
        *launch["aliases"],
    }
    assert launch["coherence"] is None and launch["recent_count"] >= 15
    decline = next(e for e in result["declining"] if e.get("family") == "zeta2")
    assert decline["successor"] == "Zeta-3" and decline["ratio"] < 0.5
    assert not {"zeta-3", "zeta-3-vl", "zeta-3-coder"} & _terms(before)
    assert "zeta-2" not in _terms(before, "declining")
    assert "steady morphing" not in _terms(result, "declining")  # a steady term does not fall
    assert "quantum sparsifier" in _terms(result)


def test_a_new_spelling_of_an_old_name_is_not_a_new_method(workspace: Workspace) -> None:
    """Vorlax-3 is used from January; in June papers start writing Vorlax3. Only ZORPO is new in June."""
    import random

    from tests.trends_data import make_doc

    rng = random.Random(7)
    with workspace.store() as store:
        base_corpus(store)
        old = [
            make_doc(rng, f"vx-old-{i}", date(2025, 1, 10 + i), "arxiv", "cs.LG", ["We fine-tune Vorlax-3 on it"])
            for i in range(6)
        ]
        new = [
            make_doc(rng, f"vx-new-{i}", date(2025, 6, 5 + i), "arxiv", "cs.LG", ["We fine-tune Vorlax3 on it"])
            for i in range(12)
        ]
        Documents(store).upsert(old + new)
        result = trends_of(workspace, store, as_of=AS_OF, window="month")
    names = {m["name"] for m in result["new_methods"]}
    assert "ZORPO" in names
    assert not {"Vorlax3", "Vorlax-3"} & names


def test_new_methods_are_what_papers_introduce_not_names_seen_in_several(workspace: Workspace) -> None:
    """New methods come from the method cards: ZORPO (a paper introduces it, later papers train with it) is new,
    counted as the store holds it by as_of; BLIMPBENCH, named by a dozen June papers that introduce nothing, is
    not, though the plain first-seen detector lists it; nor is OLDPO, which a June paper "introduces" after five
    earlier papers used it (an acronym in use: its later mentions are no adoption of that paper)."""
    import random
    from dataclasses import replace

    from tests.trends_data import ZORPO_ID, make_doc

    rng = random.Random(11)
    with workspace.store() as store:
        base_corpus(store)
        bench = [
            make_doc(rng, f"2506.0{i:04d}", date(2025, 6, 3 + i), "arxiv", "cs.LG", ["We evaluate on BLIMPBENCH"])
            for i in range(12)
        ]
        old = [
            make_doc(rng, f"2502.0{i:04d}", date(2025, 2, 3 + i), "arxiv", "cs.LG", ["We train with OLDPO"])
            for i in range(5)
        ]
        intro = replace(
            make_doc(rng, "2506.09999", date(2025, 6, 10), "arxiv", "cs.LG", []),
            title="OLDPO: Old Policy Optimization for Reinforcement Learning with Verifiable Rewards",
            abstract="We propose OLDPO, a policy optimization algorithm for reinforcement learning with verifiable "
            "rewards of large language models that improves on GRPO.",
        )
        Documents(store).upsert([*bench, *old, intro])
        tag(store, [(ZORPO_ID, "rl-policy-optimization"), ("2506.09999", "rl-policy-optimization")])
        env = env_of(workspace, store)
        result = msgspec.to_builtins(compute_trends(store, env, as_of=AS_OF, window="month"))
        plain = msgspec.to_builtins(
            compute_trends(store, replace(env, introductions=None), as_of=AS_OF, window="month")
        )
        naming = [d for d in Documents(store).scan(until="2025-06-30T23:59:59Z") if "ZORPO" in d.title + d.abstract]
        june = [d for d in naming if d.published >= "2025-06-01"]
    names = {m["name"]: m for m in result["new_methods"]}
    assert "BLIMPBENCH" in {m["name"] for m in plain["new_methods"]}  # the check can fail: the old list had it
    assert "BLIMPBENCH" not in names and "OLDPO" not in names
    zorpo = names["ZORPO"]
    assert zorpo["first_id"] == ZORPO_ID and zorpo["example_ids"][0] == ZORPO_ID
    assert zorpo["kind"] == "method" and zorpo["area"] == "rl-post-training" and zorpo["changes"]
    assert zorpo["count"] == len(naming) and zorpo["recent_count"] == len(june)
    assert sum(p["count"] for p in zorpo["series"]) == len(naming)


@pytest.mark.parametrize(("in_use_before", "second_paper"), [(False, False), (True, False), (False, True)])
def test_a_phrase_in_use_before_its_paper_is_not_a_new_method(
    workspace: Workspace, in_use_before: bool, second_paper: bool
) -> None:
    """A June paper introduces "Ladder Search" and later June papers use it: new, unless papers of February
    already wrote "ladder search" (the phrase, in any case; a card counts earlier mentions by token only). A
    second paper introducing the name after those uses does not make the first paper's uses "earlier"."""
    import random
    from dataclasses import replace

    from tests.trends_data import make_doc

    rng = random.Random(5)
    with workspace.store() as store:
        base_corpus(store)
        intro = replace(
            make_doc(rng, "2506.09991", date(2025, 6, 9), "arxiv", "cs.LG", []),
            title="Ladder Search: Test-Time Search for Reasoning with Verifiable Rewards",
            abstract="We propose Ladder Search, a test-time search method for reinforcement learning with verifiable "
            "rewards of large language models that improves on GRPO.",
        )
        later = [
            make_doc(
                rng, f"2506.0{i + 200:04d}", date(2025, 6, 12 + i), "arxiv", "cs.LG", ["We decode with Ladder Search"]
            )
            for i in range(8)
        ]
        earlier = [
            make_doc(
                rng, f"2502.0{i + 200:04d}", date(2025, 2, 3 + i), "arxiv", "cs.LG", ["a ladder search over plans"]
            )
            for i in range(5)
        ]
        again = replace(
            make_doc(rng, "2506.09995", date(2025, 6, 26), "arxiv", "cs.LG", []),
            title="Ladder Search: Tree Search over Verifier Ladders",
            abstract="We propose Ladder Search, a tree search method for RL training of LLMs with verifiers.",
        )
        Documents(store).upsert(
            [intro, *later, *(earlier if in_use_before else []), *([again] if second_paper else [])]
        )
        tag(store, [(i, "rl-policy-optimization") for i in ("2506.09991", *(["2506.09995"] if second_paper else []))])
        result = trends_of(workspace, store, as_of=AS_OF, window="month")
        card = [c for c in wiring.trends_env(Radar(workspace), store).introductions("2025-06-01", "2025-06-30")]
    assert sum(c.name == "Ladder Search" for c in card) == 1 + second_paper  # the papers introduce it (the premise)
    names = {m["name"] for m in result["new_methods"]}
    assert ("Ladder Search" in names) is not in_use_before


def test_trends_only_read_and_the_command_refreshes_first(workspace: Workspace) -> None:
    """The new methods are read, never written: on papers whose contributions were never decided, reading the
    cards finds none and leaves the papers undecided; `radar trends` (steps.trends) decides them first."""
    from radar.analysis.contributions.model import shipped_model
    from radar.app import steps
    from tests.trends_data import ZORPO_ID

    version = shipped_model().version
    with workspace.store() as store:
        base_corpus(store)
        tag(store, [(ZORPO_ID, "rl-policy-optimization")])
        undecided = Contributions(store).papers_without_contribution(version)
        assert ZORPO_ID in undecided
        assert not wiring.trends_env(Radar(workspace), store).introductions("2025-01-01", "2025-06-30")
        assert Contributions(store).papers_without_contribution(version) == undecided  # the read wrote nothing
        result = msgspec.to_builtins(steps.trends(Radar(workspace), store, as_of=AS_OF, window="month"))
        assert not Contributions(store).papers_without_contribution(version)
    assert "ZORPO" in {m["name"] for m in result["new_methods"]}
