"""Draw the names to hand-label as extra TRAINING labels (``analysis/names/labels/names_extra.jsonl``).

    .venv/bin/python benchmarks/draw_extra_names.py [--corpus ../shared/data/arxiv_corpus_full.jsonl.gz]
        [--labels ../shared/labels] [--evidence-cache DIR] [--seed 20261202] [--random 200] [--per-kind 40]
        [--uses 30] [--more 30] [--out /tmp/names-extra-candidates.jsonl]

The candidates are the names of the full corpus (``evidence.collect``, 3 or more papers, as the names stage
finds them) with FEWER than 30 papers (the frequent pool, whose held-out half checks the product, has 30 or
more) and whose group or spelling key (``aliases.surface_key``) is in none of the shared label files. Two
draws, both reproducible from the corpus and the seed:

(a) random: a seeded uniform sample of ``--random`` names of 5-29 papers;
(b) targeted, 5-29 papers: for each of the rare kinds (system, hardware, metric, org), the ``--per-kind``
    names not drawn yet with the highest probability of that kind by the product's kind model fitted on the
    shared labels (``find.classify``'s model, probabilities of every kind); then the ``--uses`` names not drawn
    yet with the highest use-cue share (software, device or measure: ``features.USE_FEATURES``), whatever the
    model says, so that the device and software words that are generic terms come too; and last the ``--more``
    names not drawn yet most likely ``system``, then ``hardware``, of all of 3-29 papers.

Each candidate is written with its paper count, the model's kind and probabilities, its spellings and up to
four sentences of its papers (what the annotator reads beside the introducing paper). Nothing of the shared
labels' names is written; ``names_extra`` is checked again by ``bench_names.py`` and the tests.
"""

from __future__ import annotations

import argparse
import random
import re
from pathlib import Path

import orjson
from bench_names import _cache_file, _collect, read_corpus, read_labels

from radar.analysis.names.aliases import surface_key
from radar.analysis.names.evaluate import FREQUENT_POOL
from radar.analysis.names.evidence import Corpus
from radar.analysis.names.features import features, neighbour_features, neighbours
from radar.analysis.names.find import training_set
from radar.analysis.names.kinds import tuned_model

ROOT = Path(__file__).resolve().parents[1]
RARE_KINDS = ("system", "hardware", "metric", "org")
USES = ("software", "device", "measure")  # the use cues (``features.USE_FEATURES``)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def excluded_keys(corpus: Corpus, names: list[str]) -> tuple[set[str], set[str]]:
    """The group keys and spelling keys of the shared labels' names."""
    groups = {ev.key for n in names if (ev := corpus.find(n)) is not None}
    return groups, {surface_key(n) for n in names}


def candidates(corpus: Corpus, shared: list[str]) -> list[str]:
    """Group keys of the names with fewer than ``FREQUENT_POOL`` papers, disjoint from the shared labels."""
    groups, spellings = excluded_keys(corpus, shared)
    out = []
    for key, ev in corpus.names.items():
        if ev.n_docs >= FREQUENT_POOL or key in groups:
            continue
        if any(surface_key(s) in spellings for s in (ev.name, *ev.spellings)):
            continue
        out.append(key)
    return sorted(out)


def sentences(corpus: Corpus, key: str, k: int = 4) -> list[str]:
    """Up to ``k`` sentences of the name's papers that hold one of its spellings (first, middle, last papers)."""
    ev = corpus.names[key]
    forms = sorted(ev.spellings, key=len, reverse=True)
    docs = ev.docs if len(ev.docs) <= k else [ev.docs[round(i * (len(ev.docs) - 1) / (k - 1))] for i in range(k)]
    out = []
    for d in docs:
        title, abstract = corpus.texts[d]
        hit = next((s for s in [title, *_SENTENCE.split(abstract)] if any(f in s for f in forms)), title)
        out.append(f"[{corpus.ids[d]}] {hit[:400]}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/data/arxiv_corpus_full.jsonl.gz")
    ap.add_argument("--labels", type=Path, default=ROOT.parent / "shared/labels")
    ap.add_argument("--evidence-cache", type=Path, default=None)
    ap.add_argument("--seed", type=int, default=20261202)
    ap.add_argument("--random", type=int, default=200)
    ap.add_argument("--per-kind", type=int, default=40)
    ap.add_argument("--uses", type=int, default=30)
    ap.add_argument("--more", type=int, default=30)
    ap.add_argument("--out", type=Path, default=Path("/tmp/names-extra-candidates.jsonl"))
    args = ap.parse_args()
    docs = read_corpus(args.corpus)
    cache = _cache_file(args.evidence_cache, args.corpus, 0) if args.evidence_cache else None
    corpus, _, _ = _collect(docs, cache)
    labels, _ = read_labels(args.labels)
    shared = [  # every name of the shared files, ``unknown`` ones too
        str(orjson.loads(line)["name"])
        for f in sorted(args.labels.glob("names_dev*.jsonl"))
        for line in f.read_text("utf-8").splitlines()
        if line.strip()
    ]
    pool = candidates(corpus, shared)
    train = training_set(corpus, labels)

    def row(key: str) -> dict[str, float]:
        ev = corpus.names[key]
        return {**features(key, ev), **neighbour_features(ev, neighbours(ev, corpus.lookup), train)}

    model = tuned_model([row(k) for k in train], list(train.values()), list(train))
    classes, proba = model.proba([row(k) for k in pool])
    said = {k: dict(zip(classes, map(float, p), strict=True)) for k, p in zip(pool, proba, strict=True)}
    band = [k for k in pool if corpus.names[k].n_docs >= 5]
    drawn: dict[str, str] = {k: "random" for k in random.Random(args.seed).sample(band, args.random)}
    for kind in RARE_KINDS:
        ranked = sorted((k for k in band if k not in drawn), key=lambda k: (-said[k][kind], k))
        drawn.update({k: f"top-{kind}" for k in ranked[: args.per_kind]})
    # the device / software / measure words, whatever the model says (CPU-like generic terms among them)
    uses = {k: max(row(k).get(f"use={u}", 0.0) for u in USES) for k in band if k not in drawn}
    ranked = sorted(uses, key=lambda k: (-uses[k], k))
    drawn.update({k: "top-use" for k in ranked[: args.uses]})
    # the two rarest kinds once more, from all of 3-29 papers (the 5-29 band holds few devices and tools)
    for kind in ("system", "hardware"):
        ranked = sorted((k for k in pool if k not in drawn), key=lambda k: (-said[k][kind], k))
        drawn.update({k: f"more-{kind}" for k in ranked[: args.more]})
    with args.out.open("wb") as fh:
        for key, how in drawn.items():
            ev = corpus.names[key]
            probs = said[key]
            fh.write(
                orjson.dumps(
                    {
                        "name": ev.name,
                        "key": key,
                        "drawn": how,
                        "count": ev.n_docs,
                        "model": max(probs, key=lambda c: probs[c]),
                        "p": {c: round(v, 2) for c, v in sorted(probs.items(), key=lambda kv: -kv[1])[:3]},
                        "spellings": [s for s, _ in ev.spellings.most_common(5)],
                        "first_id": corpus.ids[ev.docs[0]],
                        "snippets": sentences(corpus, key),
                    }
                )
                + b"\n"
            )
    print(f"{len(pool):,} candidates (< {FREQUENT_POOL} papers, disjoint from {len(shared)} shared labels); ", end="")
    print(f"{len(band):,} of 5-{FREQUENT_POOL - 1} papers; drew {len(drawn)} -> {args.out}")


if __name__ == "__main__":
    main()
