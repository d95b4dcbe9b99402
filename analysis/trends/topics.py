"""Topic discovery: cluster recent documents' embeddings, label clusters by c-TF-IDF, and keep
topic identities stable from one run to the next.

- Documents: those published in the topic horizon (``topic_weeks``/``topic_months`` back from
  as_of) that have a vector from the workspace's current embedding model for their current
  content; the others are skipped (for topics only).
- Clustering: k-means on unit vectors, k = n / 150 clamped to [4, 40], started from the anchored seed of
  topic_ids.py (the clustering of the horizon ending on the anchor day before as_of, seeded in turn by the
  anchors before it), so the same data gives the same clusters whatever ran before, and consecutive weeks,
  which share their seed, converge alike. Seeded k-means was chosen by measurement (benchmarks/bench_trends.py,
  README): seeded kept 97% of documents' topic ids week to week (ARI 0.95); unseeded k-means 61%;
  MiniBatchKMeans 86%; HDBSCAN on the raw 384-d vectors left 92% of documents as noise.
- Identity: each cluster takes the id of the registry's prototypes it matches (topic_ids.py: Hungarian matching,
  cosine >= ``topic_match``, only prototypes computed for an as-of day on or before this one, so --as-of cannot
  see the future); others get new ids. A matched topic keeps its label while two of its three label words are
  still among its top ten.
- Labels: class-based TF-IDF over the cached terms (a term's share of the cluster's term mentions x
  log(documents / documents with the term)), keeping terms at least 1.5x more common in the cluster
  than overall; words already covered by a longer keyword are dropped.
- Growth: stratified rate ratio of the topic's share in the recent window against the rest of the horizon.
- State: ``WORKSPACE/index/topics/registry-<window>.npz`` and ``anchors/``, written atomically.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from radar.analysis.trends.config import TrendsConfig, Windows, windows
from radar.analysis.trends.counts import day_rows
from radar.analysis.trends.result import Topic
from radar.analysis.trends.stats import stratified_test
from radar.analysis.trends.term_table import TermTable, day_number
from radar.analysis.trends.topic_ids import ANCHOR_DEPTH, Registry, anchor_before, horizon_key, load_seed, save_seed
from radar.index.config import EmbeddingConfig
from radar.index.embeddings import Embeddings
from radar.index.errors import IndexError_, ModelNotFound
from radar.index.pipeline import stored_model
from radar.store.table import Database

SAMPLE = 20  # a topic's members nearest its centroid, for readers that judge what the topic is about


def current_model(store: Database, embedding: EmbeddingConfig) -> str | None:
    """The embedding model id radar.toml asks for (int8 or float), if the store has its vectors."""
    try:
        return stored_model(store, embedding)[0]
    except ModelNotFound:  # the model is not installed here: use what the store has most of
        models = Embeddings(store).models()
        return max(models, key=lambda m: models[m])
    except IndexError_:  # nothing embedded, or another model's vectors: no topics
        return None


def _vectors(store: Database, model: str, ids: list[str]) -> tuple[list[int], np.ndarray]:
    found = Embeddings(store).current_vectors(ids, model)
    keep = [i for i, doc_id in enumerate(ids) if doc_id in found]
    if not keep:
        return [], np.zeros((0, 0), dtype=np.float32)
    vectors = np.stack([np.frombuffer(found[ids[i]], dtype=np.float32) for i in keep])
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    return keep, vectors


def cluster(vectors: np.ndarray, k: int, init: np.ndarray | None, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(labels, unit centroids). ``init``: previous centroids to start from (used first)."""
    from sklearn.cluster import KMeans, kmeans_plusplus

    start = None
    if init is not None and len(init):
        carried = init[:k]
        extra = k - len(carried)
        if extra > 0:
            seeds, _ = kmeans_plusplus(vectors, n_clusters=extra, random_state=seed)
            carried = np.vstack([carried, seeds])
        start = carried
    model = KMeans(n_clusters=k, init=start if start is not None else "k-means++", n_init=1, random_state=seed)
    labels = model.fit_predict(vectors)
    centers = model.cluster_centers_
    centroids = centers / np.maximum(np.linalg.norm(centers, axis=1, keepdims=True), 1e-12)
    return labels, centroids.astype(np.float32)


def match(previous: np.ndarray, current: np.ndarray, threshold: float) -> dict[int, int]:
    """current cluster -> previous topic index, by Hungarian matching on cosine similarity."""
    if previous is None or not len(previous) or not len(current):
        return {}
    from scipy.optimize import linear_sum_assignment

    sim = current @ previous.T
    rows, cols = linear_sum_assignment(-sim)
    return {int(r): int(c) for r, c in zip(rows, cols, strict=True) if sim[r, c] >= threshold}


def ctfidf_keywords(table: TermTable, rows: np.ndarray, labels: np.ndarray, k: int, top: int = 10) -> list[list[str]]:
    """Top c-TF-IDF keywords per cluster from the cached terms (method names excluded: their
    lowercase spelling is a term too)."""
    block = table.matrix[rows]
    member = sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (labels, np.arange(len(rows)))), shape=(k, len(rows)))
    counts = (member @ block).tocsc()
    freq = np.asarray(counts.sum(axis=0)).ravel()
    cols = np.flatnonzero(freq >= 2)
    counts = counts[:, cols].toarray()
    freq = freq[cols]
    words = counts.sum(axis=1, keepdims=True)
    tf = counts / np.maximum(words, 1)
    idf = np.log(len(rows) / np.maximum(freq, 1))  # freq = documents of the horizon with the term
    lift = tf / np.maximum(freq / max(freq.sum(), 1), 1e-12)[None, :]
    score = np.where(lift >= 1.5, tf * idf[None, :], 0.0)
    out = []
    for c in range(k):
        chosen: list[tuple[str, int]] = []
        for j in np.argsort(-score[c])[: top * 6]:
            if counts[c, j] < 2 or score[c, j] <= 0:
                break
            col = int(cols[j])
            key = table.term(col)
            if key.startswith("@"):
                continue
            words_in = set(key.split())
            if any(words_in <= set(other.split()) for other, _ in chosen):
                continue
            chosen = [(o, oc) for o, oc in chosen if not set(o.split()) <= words_in]
            chosen.append((key, col))
            if len(chosen) >= top:
                break
        out.append([table.readable(col) for _, col in chosen])
    return out


def _k(n: int) -> int:
    return int(np.clip(round(n / 150), 4, 40))


def _horizon(
    store: Database, table: TermTable, model: str, cfg: TrendsConfig, window: str, as_of: date
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(all rows of the topic horizon ending on ``as_of``, the rows with a current vector, their unit vectors)."""
    win = windows(as_of, window, cfg)
    lo, hi = day_rows(table, win.topic_start, as_of)
    rows = np.arange(max(lo, hi - cfg.max_topic_docs), hi)
    keep, vectors = _vectors(store, model, [table.ids[r] for r in rows])
    return rows, rows[keep], vectors


def _seed(
    store: Database,
    table: TermTable,
    cfg: TrendsConfig,
    window: str,
    model: str,
    day: date,
    depth: int,
    folder: Path,
) -> np.ndarray | None:
    """The anchored seed for runs after ``day`` (an anchor): the clustering of the horizon ending on ``day``, seeded
    by the anchor before it (``depth`` anchors deep), its centroids largest cluster first; cached (topic_ids.py)."""
    win = windows(day, window, cfg)
    lo, hi = day_rows(table, win.topic_start, day)
    lo = max(lo, hi - cfg.max_topic_docs)
    if hi - lo < 40:
        return None
    members = [f"{table.ids[r]}:{table.hashes[r].decode()}" for r in range(lo, hi)]
    key = horizon_key(model, window, day, depth, members)
    cached = load_seed(folder, key)
    if cached is not None:
        return cached if len(cached) else None
    _, rows, vectors = _horizon(store, table, model, cfg, window, day)
    seed = np.zeros((0, 0), dtype=np.float32)
    if len(rows) >= 40:
        init = _seed(store, table, cfg, window, model, anchor_before(day), depth - 1, folder) if depth > 0 else None
        k = _k(len(rows))
        labels, centroids = cluster(vectors, k, init)
        seed = centroids[np.argsort(-np.bincount(labels, minlength=k), kind="stable")]
    save_seed(folder, key, seed)
    return seed if len(seed) else None


def discover_topics(
    store: Database,
    table: TermTable,
    win: Windows,
    cfg: TrendsConfig,
    window: str,
    *,
    embedding: EmbeddingConfig,
    state_dir: Path,
) -> tuple[list[Topic], str]:
    """(topics, note). The note says why there are none, when there are none. The anchored seeds and the id
    registry are kept in ``state_dir`` (topic_ids.py): the same data gives the same topics and ids."""
    model = current_model(store, embedding)
    if model is None:
        return [], "no embeddings from the current model; run `radar index`"
    _, rows, vectors = _horizon(store, table, model, cfg, window, win.as_of)
    if len(rows) < 40:
        return [], f"only {len(rows)} embedded documents in the topic horizon (need 40); run `radar index`"
    k = _k(len(rows))
    seed = _seed(store, table, cfg, window, model, anchor_before(win.as_of), ANCHOR_DEPTH, state_dir)
    labels, centroids = cluster(vectors, k, seed)
    keywords = ctfidf_keywords(table, rows, labels, k)
    registry = Registry.load(state_dir, window, model)
    ids, names, _ = registry.assign(centroids, keywords, win.as_of, cfg.topic_match)
    registry.save(state_dir)
    return _describe(table, rows, vectors, labels, centroids, ids, names, keywords, win, cfg), ""


def _describe(
    table: TermTable,
    rows: np.ndarray,
    vectors: np.ndarray,
    labels: np.ndarray,
    centroids: np.ndarray,
    ids: list[str],
    names: list[str],
    keywords: list[list[str]],
    win: Windows,
    cfg: TrendsConfig,
) -> list[Topic]:
    k = len(ids)
    recent = table.day[rows] >= day_number(win.recent_start.isoformat())
    strata = table.stratum[rows]
    n_strata = len(table.strata)
    n = np.bincount(strata[recent], minlength=n_strata).astype(np.float64)
    m = np.bincount(strata[~recent], minlength=n_strata).astype(np.float64)
    a = np.zeros((n_strata, k))
    b = np.zeros((n_strata, k))
    np.add.at(a, (strata[recent], labels[recent]), 1)
    np.add.at(b, (strata[~recent], labels[~recent]), 1)
    test = stratified_test(a, n, b, m, min_stratum_docs=min(cfg.min_stratum_docs, 5))
    out: list[Topic] = []
    for c in range(k):
        members = np.flatnonzero(labels == c)
        closeness = vectors[members] @ centroids[c]
        nearest = [table.ids[int(rows[i])] for i in members[np.argsort(-closeness)][:SAMPLE]]
        examples = nearest[:3]
        out.append(
            Topic(
                id=ids[c],
                label=names[c],
                keywords=keywords[c][:8],
                size=int(len(members)),
                recent_size=int(recent[members].sum()),
                growth=round(float(test.ratio[c]), 3),
                example_ids=examples,
                sample_ids=nearest,
            )
        )
    return sorted(out, key=lambda t: (-t.recent_size, t.id))
