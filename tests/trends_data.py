"""Synthetic corpora for the trends tests: known rises, flat terms and a source-mix change."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import date, timedelta

import numpy as np

from radar.crawler.documents import Document, Documents
from radar.index.embeddings import Embeddings
from radar.store.db import Store

# made-up topic words: no stop-words, no generic words, no collisions with the rules
WORDS = [f"{c}{v}{e}" for c in "bdfgklmnprstvz" for v in "aeiou" for e in ("lox", "rim", "tash")]
# what documents about one thing share besides their term (the coherence check looks for it)
SPARSIFIER_TOPIC = ["spectral graph", "kernel sampler", "eigenvalue cut", "laplacian solver", "edge sketch"]
LATTICE_TOPIC = ["superpixel contour", "mask boundary", "region grower", "edge map", "instance mask"]


def topical(rng: random.Random, sentence: str, topic: list[str]) -> str:
    return f"{sentence} to {', '.join(rng.sample(topic, 4))}"


def day_iter(first: date, last: date):  # type: ignore[no-untyped-def]
    d = first
    while d <= last:
        yield d
        d += timedelta(days=1)


def make_doc(
    rng: random.Random,
    doc_id: str,
    day: date,
    source: str,
    primary: str,
    extra: list[str],
    categories: tuple[str, ...] = (),
) -> Document:
    words = rng.sample(WORDS, 30)
    title = " ".join(words[:5] + extra[:1])
    abstract = ". ".join([" ".join(words[5:15]), *extra, " ".join(words[15:])]) + "."
    return Document(
        id=doc_id,
        kind="paper",
        source=source,
        title=title.capitalize(),
        abstract=abstract,
        published=f"{day.isoformat()}T12:00:00Z",
        primary_category=primary,
        categories=categories or (primary,),
    )


def base_corpus(
    store: Store,
    *,
    first: date = date(2025, 1, 1),
    last: date = date(2025, 6, 30),
    per_day: int = 5,
    rise_from: date = date(2025, 6, 1),
    rise_rate: float = 0.3,
    seed: int = 7,
) -> None:
    """One source (cs.CL). "steady morphing" appears in 20% of documents throughout; "quantum
    sparsifier" in 2% until ``rise_from`` and 30% after; the method ZORPO only after it: a paper introduces it
    on ``rise_from`` (its method card), others train with it."""
    rng, topic_rng = random.Random(seed), random.Random(seed + 1)
    docs = []
    for day in day_iter(first, last):
        for k in range(per_day):
            extra = []
            if rng.random() < 0.2:
                extra.append("We rely on steady morphing of the inputs")
            rate = rise_rate if day >= rise_from else 0.02
            if rng.random() < rate:
                extra.append(topical(topic_rng, "A quantum sparsifier is applied", SPARSIFIER_TOPIC))
            if day >= rise_from and rng.random() < 0.15:
                extra.append("We train with ZORPO")
            docs.append(make_doc(rng, f"2501.{day.strftime('%m%d')}{k}", day, "feed-a", "cs.CL", extra))
    if first <= rise_from <= last:
        docs.append(zorpo_paper(rise_from))
    Documents(store).upsert(docs)


ZORPO_ID = "2501.99999"


def zorpo_paper(day: date) -> Document:
    """The paper that introduces ZORPO (the contributions model reads it as a method in rl-post-training)."""
    return Document(
        id=ZORPO_ID,
        kind="paper",
        source="feed-a",
        title="ZORPO: Zeroth-Order Reinforced Policy Optimization for RLVR",
        abstract="We propose ZORPO, a policy optimization algorithm for reinforcement learning with verifiable "
        "rewards (RLVR) of large language models that replaces the group-mean advantage baseline of GRPO with a "
        "zeroth-order estimate. ZORPO improves math reasoning after RL post-training.",
        published=f"{day.isoformat()}T08:00:00Z",
        primary_category="cs.CL",
        categories=("cs.CL",),
    )


def new_source(
    store: Store, *, first: date = date(2025, 6, 1), last: date = date(2025, 6, 30), per_day: int = 15, seed: int = 11
) -> list[str]:
    """A second source that starts late with many cs.CV documents, half of them about "pixel
    lattice", a phrase that cs.CL documents of the first source use at a steady 3%."""
    rng, topic_rng = random.Random(seed), random.Random(seed + 1)
    docs = []
    for day in day_iter(first, last):
        for k in range(per_day):
            extra = [topical(topic_rng, "Each pixel lattice is fitted", LATTICE_TOPIC)] if rng.random() < 0.5 else []
            if rng.random() < 0.3:  # a model family the first source never names: new with the source
                extra.append("We fine-tune Vora-1")
            docs.append(make_doc(rng, f"2506.{day.strftime('%d')}{k:03d}", day, "feed-b", "cs.CV", extra))
    Documents(store).upsert(docs)
    return [d.id for d in docs]


def pixel_lattice_in_base(store: Store, *, seed: int = 3) -> None:
    """Give 3% of the first source's documents the phrase the new source brings in bulk."""
    rng, topic_rng = random.Random(seed), random.Random(seed + 1)
    docs = []
    for doc in Documents(store).scan():
        if doc.source == "feed-a" and rng.random() < 0.03:
            sentence = topical(topic_rng, "Each pixel lattice is fitted", LATTICE_TOPIC)
            docs.append(replace(doc, abstract=f"{doc.abstract} {sentence}."))
    Documents(store).upsert(docs)


def generic_rise(
    store: Store, *, word: str = "wuggle", since: date = date(2025, 6, 1), share: float = 0.3, seed: int = 5
) -> None:
    """From ``since``, ``word`` joins ``share`` of the documents, whatever they are about (like "lock" or
    "held" in real abstracts): as sudden a rise as "quantum sparsifier", in documents with nothing else
    in common."""
    rng = random.Random(seed)
    docs = []
    for doc in Documents(store).scan(since=f"{since.isoformat()}T00:00:00Z"):
        if rng.random() < share:
            docs.append(replace(doc, abstract=f"{doc.abstract} It is {word}."))
    Documents(store).upsert(docs)


def tag(store: Store, rows: list[tuple[str, str]]) -> None:
    with store.transaction() as conn:
        conn.executemany(
            "INSERT OR IGNORE INTO document_tags (doc_id, tag, score, origin, created_at) "
            "VALUES (?, ?, 1.0, 'rule', '2025-07-01T00:00:00Z')",
            rows,
        )


def noisy_vectors(store: Store, model: str, noise: float, since: str = "2025-02-01") -> None:
    """Vectors of ``model`` for the documents since ``since``, around 8 centres with ``noise`` (at 1.6, where
    k-means starts decides where it ends)."""
    rng = np.random.default_rng(3)
    centres = rng.normal(size=(8, 384)).astype(np.float32)
    rows = []
    for i, d in enumerate(Documents(store).scan(since=since)):
        v = centres[i % 8] + noise * rng.normal(size=384).astype(np.float32)
        rows.append((d.id, model, d.content_hash, (v / np.linalg.norm(v)).astype(np.float32).tobytes()))
    Embeddings(store).save(rows)


def continuing_corpus(store: Store, *, seed: int = 7) -> None:
    """``base_corpus`` to the end of August, "quantum sparsifier" rising from 2% to 20% of documents on
    1 June and staying there: by August the plain baseline (February .. July) holds two high months."""
    base_corpus(store, last=date(2025, 8, 31), rise_rate=0.2, seed=seed)


def model_family(store: Store, *, seed: int = 13) -> None:
    """A model family replaced by its successor, in documents about anything (like model names used as
    baselines): "Zeta-2" is in 20% of documents until March and 4% from April; "Zeta-3" appears on
    1 June in 15% of documents, spread over three variants (Zeta-3, Zeta-3-VL, Zeta-3-Coder)."""
    rng = random.Random(seed)
    docs = []
    for doc in Documents(store).scan():
        extra = []
        day = date.fromisoformat(doc.published[:10])
        if rng.random() < (0.2 if day < date(2025, 4, 1) else 0.04):
            extra.append("We compare with Zeta-2")
        if day >= date(2025, 6, 1) and rng.random() < 0.15:
            extra.append(f"We evaluate {rng.choice(['Zeta-3', 'Zeta-3-VL', 'Zeta-3-Coder'])}")
        if extra:
            docs.append(replace(doc, abstract=f"{doc.abstract} {'. '.join(extra)}."))
    Documents(store).upsert(docs)
