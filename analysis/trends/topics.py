"""Topic discovery: cluster recent documents' embeddings, label clusters by c-TF-IDF, and keep
topic identities stable from one run to the next.

- Documents: those published in the topic horizon (``topic_weeks``/``topic_months`` back from
  as_of) that have a vector from the workspace's current embedding model for their current
  content; the others are skipped (for topics only).
- Clustering: k-means on unit vectors, k = n / 150 clamped to [4, 40], seeded with the previous
  run's centroids (the rest by k-means++), so a rerun on nearly the same documents converges to
  nearly the same clusters. Chosen by measurement (benchmarks/bench_trends.py, README): seeded
  k-means kept 97% of documents' topic ids week to week (ARI 0.95); unseeded k-means 61%;
  MiniBatchKMeans 86%; HDBSCAN on the raw 384-d vectors left 92% of documents as noise.
- Identity: each cluster takes the id of the previous topic whose centroid is most similar
  (Hungarian matching, cosine >= ``topic_match``); others get new ids. The previous state is the
  newest one saved for an earlier as_of (never a later one, so --as-of cannot see the future).
  A matched topic keeps its label while two of its three label words are still among its top ten.
- Labels: class-based TF-IDF over the cached terms (a term's share of the cluster's term mentions x
  log(documents / documents with the term)), keeping terms at least 1.5x more common in the cluster
  than overall; words already covered by a longer keyword are dropped.
- Growth: stratified rate ratio of the topic's share in the recent window against the rest of the horizon.
- State: ``WORKSPACE/index/topics/<window>-<as_of>.npz`` (centroids, ids, labels), written atomically.
"""

from __future__ import annotations

import io
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import scipy.sparse as sp

from radar.analysis.trends.cache import TermTable, day_number
from radar.analysis.trends.config import TrendsConfig, Windows
from radar.analysis.trends.counts import day_rows
from radar.analysis.trends.result import Topic
from radar.analysis.trends.stats import stratified_test
from radar.index.config import EmbeddingConfig
from radar.index.errors import IndexError_, ModelNotFound
from radar.index.pipeline import stored_model
from radar.store.db import Store
from radar.store.files import write_cache_atomic

SAMPLE = 20  # a topic's members nearest its centroid, for readers that judge what the topic is about


def current_model(store: Store, embedding: EmbeddingConfig) -> str | None:
    """The embedding model id radar.toml asks for (int8 or float), if the store has its vectors."""
    try:
        return stored_model(store, embedding)[0]
    except ModelNotFound:  # the model is not installed here: use what the store has most of
        models = store.embedding_models()
        return max(models, key=lambda m: models[m])
    except IndexError_:  # nothing embedded, or another model's vectors: no topics
        return None


def _load_previous(folder: Path, window: str, as_of: date) -> dict[str, Any] | None:
    if not folder.is_dir():
        return None
    earlier = sorted(p for p in folder.glob(f"{window}-*.npz") if p.stem[len(window) + 1 :] < as_of.isoformat())
    for path in reversed(earlier):
        try:
            with np.load(path, allow_pickle=False) as z:
                meta = orjson.loads(bytes(z["meta"]))
                return {"centroids": z["centroids"].astype(np.float32), **meta}
        except (OSError, ValueError, KeyError, orjson.JSONDecodeError):
            continue
    return None


KEEP_STATES = 104


def _save_state(folder: Path, window: str, as_of: date, centroids: np.ndarray, meta: dict[str, Any]) -> None:
    buf = io.BytesIO()
    np.savez(buf, centroids=centroids.astype(np.float32), meta=np.frombuffer(orjson.dumps(meta), dtype=np.uint8))
    write_cache_atomic(folder / f"{window}-{as_of.isoformat()}.npz", buf.getvalue())  # kept where writable
    # one file per as-of day: keep the newest KEEP_STATES per window (two years of weeks)
    states = sorted(folder.glob(f"{window}-*.npz"))
    for old in states[:-KEEP_STATES]:
        old.unlink(missing_ok=True)


def _vectors(store: Store, model: str, ids: list[str]) -> tuple[list[int], np.ndarray]:
    found = store.current_vectors(ids, model)
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


def discover_topics(
    store: Store,
    table: TermTable,
    win: Windows,
    cfg: TrendsConfig,
    window: str,
    *,
    embedding: EmbeddingConfig,
    state_dir: Path,
) -> tuple[list[Topic], str]:
    """(topics, note). The note says why there are none, when there are none. Topic centroids are kept in
    ``state_dir`` so that a topic keeps its id from one run to the next."""
    model = current_model(store, embedding)
    if model is None:
        return [], "no embeddings from the current model; run `radar index`"
    lo, hi = day_rows(table, win.topic_start, win.as_of)
    rows = np.arange(max(lo, hi - cfg.max_topic_docs), hi)
    keep, vectors = _vectors(store, model, [table.ids[r] for r in rows])
    if len(keep) < 40:
        return [], f"only {len(keep)} embedded documents in the topic horizon (need 40); run `radar index`"
    rows = rows[keep]
    k = int(np.clip(round(len(rows) / 150), 4, 40))
    previous = _load_previous(state_dir, window, win.as_of)
    prev_centroids = previous["centroids"] if previous and previous.get("model") == model else None
    labels, centroids = cluster(vectors, k, prev_centroids)
    matched = match(prev_centroids, centroids, cfg.topic_match) if prev_centroids is not None else {}
    keywords = ctfidf_keywords(table, rows, labels, k)
    next_id = int(previous["next_id"]) if previous else 1
    ids: list[str] = []
    names: list[str] = []
    label_words: list[list[str]] = []
    for c in range(k):
        p = matched.get(c)
        if p is not None and previous is not None:
            ids.append(previous["ids"][p])
            old = previous["keywords"][p]
            if old and sum(w in keywords[c] for w in old) >= 2:  # a kept topic keeps its label while it fits
                names.append(previous["labels"][p])
                label_words.append(old)
                continue
        else:
            ids.append(f"t{next_id}")
            next_id += 1
        names.append(" / ".join(keywords[c][:3]))
        label_words.append(keywords[c][:3])
    _save_state(
        state_dir,
        window,
        win.as_of,
        centroids,
        {"model": model, "ids": ids, "labels": names, "keywords": label_words, "next_id": next_id},
    )
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
            {
                "id": ids[c],
                "label": names[c],
                "keywords": keywords[c][:8],
                "size": int(len(members)),
                "recent_size": int(recent[members].sum()),
                "growth": round(float(test.ratio[c]), 3),
                "example_ids": examples,
                "sample_ids": nearest,
            }
        )
    return sorted(out, key=lambda t: (-t["recent_size"], t["id"]))
