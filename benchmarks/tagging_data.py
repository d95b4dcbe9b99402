"""Data for the tagging benchmarks: the shipped labels (dev + dev2 + dev3), their texts, their vectors
from the packaged embedding model (as `radar index` stores them on a CPU: int8 ONNX), and folds.

The vectors are the shipped ones (analysis/tags/labels/vectors.npz, what `radar tag` trains on in a workspace
that does not hold the papers) where model id and text hash match; others are embedded and cached in the
temp folder, keyed by the model id and the texts. ``RADAR_BENCH_CACHE`` moves the cache.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from radar.analysis.tags.taxonomy import DEFAULT_TAXONOMY, Taxonomy, load_taxonomy_file
from radar.analysis.tags.training import LABELS_DIR, SHIPPED_VECTORS, read_label_file, shipped_papers

LABEL_FILES = ("dev.jsonl", "dev2.jsonl", "dev3.jsonl")
BOUNDARY = 2  # LabeledSet.source of dev3: papers sampled at the tagger's boundaries, scored apart too


def cache_dir() -> Path:
    path = Path(os.environ.get("RADAR_BENCH_CACHE", Path(tempfile.gettempdir()) / "radar-bench-tagging"))
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass
class LabeledSet:
    ids: list[str]
    titles: list[str]
    abstracts: list[str]
    vectors: np.ndarray  # (n, dim) unit vectors of the packaged model
    y: np.ndarray  # (n, tags) bool
    source: np.ndarray  # (n,) index into LABEL_FILES
    taxonomy: Taxonomy
    sampled_as: list[list[str]]  # dev3's "tag:tagged-low" / "tag:untagged-keyword", [] for dev and dev2

    @property
    def names(self) -> list[str]:
        return self.taxonomy.names


def embed_cached(texts: list[str]) -> tuple[np.ndarray, str]:
    """Vectors of ``texts`` from the packaged model (int8 ONNX on the CPU, as `radar index` makes them)."""
    from radar.index.config import EmbeddingConfig
    from radar.index.embedder import make_embedder, model_id_for, resolve_model_dir

    cfg = EmbeddingConfig()
    model_id = model_id_for(cfg, resolve_model_dir(cfg.model), int8=True)
    digest = hashlib.sha1("\n".join([model_id, *texts]).encode()).hexdigest()[:16]
    path = cache_dir() / f"vectors-{digest}.npy"
    if path.is_file():
        return np.load(path, allow_pickle=False), model_id
    embedder = make_embedder(cfg, device="cpu", cache_dir=cache_dir() / "models", precision="int8")
    vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, vectors)
    tmp.replace(path)
    return vectors, model_id


def shipped_or_embedded(ids: list[str], texts: list[str]) -> np.ndarray:
    """The shipped vectors of the labeled papers where they hold this text under the packaged model (int8),
    the rest embedded (cached)."""
    from radar.index.config import EmbeddingConfig
    from radar.index.embedder import model_id_for, resolve_model_dir
    from radar.index.prebuilt import PrebuiltVectors

    cfg = EmbeddingConfig()
    model_id = model_id_for(cfg, resolve_model_dir(cfg.model), int8=True)
    hashes = [hashlib.sha1(t.encode()).hexdigest() for t in texts]
    hits, found = PrebuiltVectors.open(SHIPPED_VECTORS).take(model_id, list(zip(ids, hashes, strict=True)))
    have = dict(zip(hits, found, strict=True))
    missing = [k for k, i in enumerate(ids) if i not in have]
    if missing:
        fresh, _ = embed_cached([texts[k] for k in missing])
        have.update((ids[k], v) for k, v in zip(missing, fresh, strict=True))
    return np.stack([have[i] for i in ids]).astype(np.float32)


def load_labeled(taxonomy: Taxonomy | None = None, files: tuple[str, ...] = LABEL_FILES) -> LabeledSet:
    """The shipped labeled papers of ``files`` (default: all three sets); ``source`` indexes LABEL_FILES."""
    from radar.index.embedder import document_text

    taxonomy = taxonomy or load_taxonomy_file(DEFAULT_TAXONOMY)
    papers = shipped_papers()
    ids: list[str] = []
    rows: list[list[bool]] = []
    source: list[int] = []
    sampled: list[list[str]] = []
    for k, name in enumerate(LABEL_FILES):
        if name not in files:
            continue
        path = LABELS_DIR / name
        extra = {row["id"]: row.get("sampled_as", []) for row in map(json.loads, path.read_text().splitlines())}
        for doc_id, tags in read_label_file(path, taxonomy).items():
            ids.append(doc_id)
            rows.append([n in tags for n in taxonomy.names])
            source.append(k)
            sampled.append(list(extra[doc_id]))
    if len(set(ids)) != len(ids):
        raise SystemExit("the shipped label files share ids; each paper must be labeled once")
    titles = [papers[i][0] for i in ids]
    abstracts = [papers[i][1] for i in ids]
    vectors = shipped_or_embedded(ids, [document_text(t, a) for t, a in zip(titles, abstracts, strict=True)])
    return LabeledSet(ids, titles, abstracts, vectors, np.array(rows, dtype=bool), np.array(source), taxonomy, sampled)


def corpus_texts(n: int = 5000, seed: int = 0) -> tuple[list[str], list[str]]:
    """A fixed sample of the project's snapshot (data/snapshot.jsonl.gz): unlabeled text for the
    TF-IDF vocabulary, as a workspace's documents give it in `radar tag`."""
    import gzip

    path = Path(__file__).resolve().parents[1] / "data" / "snapshot.jsonl.gz"
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    pick = np.random.default_rng(seed).permutation(len(rows))[:n]
    return [rows[i]["title"] for i in pick], [rows[i]["abstract"] for i in pick]


def multilabel_folds(y: np.ndarray, k: int, seed: int) -> list[np.ndarray]:
    """``k`` disjoint test folds covering every row, each tag's positives spread evenly (rarest tag
    first, then rows with no tag), so each fold has about 1/k of every tag's positives."""
    rng = np.random.default_rng(seed)
    n = len(y)
    fold = np.full(n, -1)
    counts = np.zeros((k, y.shape[1]))
    sizes = np.zeros(k)
    order = np.argsort(y.sum(axis=0))  # rarest tag first
    for j in order:
        rows = rng.permutation(np.flatnonzero(y[:, j] & (fold < 0)))
        for r in rows:
            need = counts[:, j] + sizes / max(n, 1) * 1e-3
            f = int(np.argmin(need + rng.random(k) * 1e-6))
            fold[r] = f
            counts[f] += y[r]
            sizes[f] += 1
    for r in rng.permutation(np.flatnonzero(fold < 0)):
        f = int(np.argmin(sizes + rng.random(k) * 1e-6))
        fold[r] = f
        sizes[f] += 1
    out = [np.flatnonzero(fold == f) for f in range(k)]
    assert sorted(np.concatenate(out).tolist()) == list(range(n))
    return out


def check_disjoint(ids: list[str], train: np.ndarray, test: np.ndarray) -> None:
    """Evaluation documents never appear in training (by row and by paper id)."""
    assert not set(train.tolist()) & set(test.tolist()), "a test row is in the training rows"
    assert not {ids[i] for i in train} & {ids[i] for i in test}, "a test paper id is in the training papers"
