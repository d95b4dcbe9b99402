"""Tagging speed of one checkout, to compare two: `decide` (features + model) on 5,000 snapshot texts.

    .venv/bin/python benchmarks/bench_tagging_speed.py            # this checkout
    /path/to/other/.venv/bin/python benchmarks/bench_tagging_speed.py   # another checkout's code, same texts

The model trains on the shipped labels of whichever `radar` the interpreter imports, with random unit vectors
(speed does not depend on their values) and 5,000 other snapshot texts for the TF-IDF vocabulary; it prints
the best CPU and wall time of 3 runs. Run both within the same minute: the machine is shared.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import gzip
import json
import time
from pathlib import Path

import numpy as np

import radar
from radar.analysis.tags.config import TaggingConfig
from radar.analysis.tags.tagger import Corpus, decide, fit_model
from radar.analysis.tags.taxonomy import DEFAULT_TAXONOMY, load_taxonomy_file
from radar.analysis.tags.training import SHIPPED_LABELS, Examples, read_label_file, shipped_papers

N_DOCS = 5000


def main() -> None:
    root = Path(radar.__path__[0]).parent
    taxonomy = load_taxonomy_file(DEFAULT_TAXONOMY)
    papers = shipped_papers()
    labels: dict[str, set[str]] = {}
    for path in SHIPPED_LABELS:
        labels.update(read_label_file(path, taxonomy, drop_unknown_tags=True))
    ids = list(labels)
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(len(ids), 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    y = np.array([[n in labels[i] for n in taxonomy.names] for i in ids], dtype=bool)
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
    with gzip.open(root / "data" / "snapshot.jsonl.gz", "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    pick = np.random.default_rng(1).permutation(len(rows))
    titles = [rows[i]["title"] for i in pick[:N_DOCS]]
    abstracts = [rows[i]["abstract"] for i in pick[:N_DOCS]]
    vocab = pick[N_DOCS : 2 * N_DOCS]
    corpus = Corpus([rows[i]["title"] for i in vocab], [rows[i]["abstract"] for i in vocab])
    model = fit_model(examples, taxonomy, TaggingConfig(), corpus, lambda texts: np.zeros((len(texts), 384)))
    doc_vectors = vectors[np.arange(N_DOCS) % len(ids)]
    runs = []
    for _ in range(3):
        cpu, wall = time.process_time(), time.perf_counter()
        for lo in range(0, N_DOCS, 4096):  # tag_documents' batch size
            decide(model, titles[lo : lo + 4096], abstracts[lo : lo + 4096], doc_vectors[lo : lo + 4096])
        runs.append((time.process_time() - cpu, time.perf_counter() - wall))
    cpu, wall = min(runs)
    print(
        f"{root}: trained on {len(ids):,} labels; decide {N_DOCS:,} documents: best CPU {cpu:.2f} s "
        f"({N_DOCS / cpu:,.0f} docs per CPU-second), wall {wall:.2f} s (load {os.getloadavg()[0]:.1f})"
    )


if __name__ == "__main__":
    main()
