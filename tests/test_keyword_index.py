"""The keyword index as a search opens it (index/postings.py): bm25s builds it, a search reads its arrays memory-mapped
without bm25s, and must rank exactly as bm25s's own ``retrieve`` did (scores bit for bit, ties in the same order);
an index saved by bm25s itself (the layout before) is still read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from radar.index.keyword import STOPWORDS_EN, TOKENIZER, KeywordIndex, document_terms, terms
from radar.index.postings import Strings

# a small vocabulary, so that many documents tie on a query (ties are where two top-k implementations part)
WORDS = [
    "grpo",
    "policy",
    "kv",
    "cache",
    "fp8",
    "training",
    "moe",
    "expert",
    "kernel",
    "gpu",
    "reward",
    "model",
    "sparse",
    "attention",
    "the",
    "of",
]


def _corpus(rng: np.random.Generator, n: int) -> list[tuple[str, str, str]]:
    def text(lo: int, hi: int) -> str:
        return " ".join(rng.choice(WORDS, size=int(rng.integers(lo, hi))))

    return [(f"2501.{i:05d}", text(1, 5), text(0, 12)) for i in range(n)]


def _bm25s(docs: list[tuple[str, str, str]]) -> bm25s.BM25:
    retriever = bm25s.BM25()
    retriever.index([document_terms(t, a) or ["\x00"] for _, t, a in docs], show_progress=False)
    return retriever


def _bm25s_search(
    retriever: bm25s.BM25, docs: list[tuple[str, str, str]], query: str, k: int, allowed: np.ndarray | None
) -> list:
    """What KeywordIndex.search returned when it held a bm25s.BM25 and called its ``retrieve``."""
    tokens = terms(query)
    if not tokens:
        return []
    mask = None if allowed is None else allowed.astype(np.float32)
    if mask is not None and not allowed.any():
        return []
    k = min(k, len(docs) if mask is None else int(mask.sum()))
    found, scores = retriever.retrieve([tokens], k=k, show_progress=False, weight_mask=mask)
    return [(docs[int(i)][0], float(s)) for i, s in zip(found[0], scores[0], strict=True) if s > 0]


@pytest.mark.parametrize("seed", range(6))
def test_search_ranks_as_bm25s_retrieve_did(seed: int, tmp_path: Path) -> None:
    """Same ids, order and scores as bm25s, before and after a save and a memory-mapped load, with and without a
    filter mask, for queries with repeated, unknown and stop words, k from 1 to all."""
    rng = np.random.default_rng(seed)
    docs = _corpus(rng, int(rng.integers(5, 120)))
    built = KeywordIndex.build(docs, "f")
    built.save(tmp_path / "bm25")
    loaded = KeywordIndex.load(tmp_path / "bm25")
    assert loaded is not None and isinstance(loaded.postings.data.base, np.memmap)  # mapped, not read
    queries = ["grpo policy", "kv cache cache", "fp8 unknownword", "the of", "moe expert kernel gpu reward", "zzz"]
    queries += [" ".join(rng.choice(WORDS, size=3)) for _ in range(10)]
    ties = 0
    retriever = _bm25s(docs)
    for query in queries:
        for allowed in (None, rng.random(len(docs)) < 0.5, np.zeros(len(docs), dtype=bool)):
            for k in (1, 3, 10, len(docs)):
                want = _bm25s_search(retriever, docs, query, k, allowed)
                assert built.search(query, k, allowed) == want, (query, k)
                assert loaded.search(query, k, allowed) == want, (query, k)
                scores = [s for _, s in want]
                ties += len(scores) - len(set(scores))
    assert ties > 0  # the corpora do exercise tied scores


def test_doc_freq_positions_and_containing_match_the_postings(tmp_path: Path) -> None:
    docs = [("a", "FP8 training", "kv cache"), ("b", "GRPO", "policy and FP8"), ("c", "MoE", "experts")]
    index = KeywordIndex.build(docs, "f")
    index.save(tmp_path / "bm25")
    for found in (index, KeywordIndex.load(tmp_path / "bm25")):
        assert found is not None
        assert found.doc_freq("fp8") == 2 and found.doc_freq("nothing") == 0
        assert found.positions(["grpo", "moe"]).tolist() == [1, 2] and found.positions(["zzz"]).size == 0
        assert found.containing(["fp8", "policy"]) == {"b"}
        assert found.position("c") == 2 and found.position("d") is None and found.doc_ids[0] == "a"


def test_an_index_saved_by_bm25s_is_still_read(tmp_path: Path) -> None:
    """The layout before (bm25s.BM25.save and doc_ids.json) opens without a rebuild, ranks the same, and says it is
    of the older layout (`radar index` then saves it again: tests/test_index.py)."""
    docs = _corpus(np.random.default_rng(7), 60)
    retriever = bm25s.BM25()
    retriever.index([document_terms(t, a) or ["\x00"] for _, t, a in docs], show_progress=False)
    folder = tmp_path / "bm25"
    retriever.save(str(folder), show_progress=False)
    meta = {"fingerprint": "f", "ids": [d[0] for d in docs], "tokenizer": TOKENIZER}
    (folder / "doc_ids.json").write_text(json.dumps(meta))
    (folder / "acronyms.json").write_text("{}")
    old = KeywordIndex.load(folder)
    assert old is not None and old.layout == 0 and old.fingerprint == "f"
    built = KeywordIndex.build(docs, "f")
    for query in ("grpo policy", "kv cache fp8", "sparse attention"):
        assert old.search(query, 10) == built.search(query, 10) == _bm25s_search(retriever, docs, query, 10, None)
    meta["tokenizer"] = TOKENIZER - 1  # saved with other tokens: rebuilt by the caller
    (folder / "doc_ids.json").write_text(json.dumps(meta))
    assert KeywordIndex.load(folder) is None


def test_a_damaged_index_is_not_trusted(tmp_path: Path) -> None:
    KeywordIndex.build([("a", "FP8 training", "x"), ("b", "GRPO", "y")], "f").save(tmp_path / "bm25")
    (tmp_path / "bm25" / "indptr.npy").write_bytes(b"not an array")
    assert KeywordIndex.load(tmp_path / "bm25") is None  # load_keyword rebuilds it


def test_stop_words_are_bm25s_own() -> None:
    from bm25s.stopwords import STOPWORDS_EN as BM25S_EN

    assert tuple(STOPWORDS_EN) == tuple(BM25S_EN)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=12), unique=True, max_size=40), st.text(max_size=12))
def test_strings_round_trip(words: list[str], other: str) -> None:
    table = Strings.of(words)
    assert len(table) == len(words) and table.as_list() == words
    assert all(table.index_of(w) == i and table[i] == w for i, w in enumerate(words))
    assert (table.index_of(other) is None) == (other not in words)


@pytest.mark.parametrize(
    "damage",
    [
        ("indices.npy", None),  # emptied by a crash: np.load's EOFError
        ("indices.npy", np.zeros(1, dtype=np.int32)),  # a well-formed array of the wrong length
        ("indptr.npy", np.array([0, 1, 2], dtype=np.int64)),
        ("vocab.order.npy", np.zeros(1, dtype=np.int64)),
        ("vocab.offsets.npy", np.array([0, 10**9], dtype=np.int64)),  # past the end of the bytes
        ("ids.order.npy", np.zeros(0, dtype=np.int64)),
    ],
)
def test_a_damaged_keyword_index_is_rebuilt_not_a_traceback(tmp_path: Path, damage: tuple[str, Any]) -> None:
    """A damaged file of a saved keyword index is caught when it is loaded (None: the caller rebuilds it), not as an
    EOFError or an IndexError in a search."""
    docs = [("a", "Group relative policy optimization", "GRPO for math."), ("b", "Sparse attention", "Fast kernels.")]
    folder = tmp_path / "bm25"
    KeywordIndex.build(docs, "fp").save(folder)
    assert KeywordIndex.load(folder) is not None
    name, array = damage
    if array is None:
        (folder / name).write_bytes(b"")
    else:
        np.save(folder / name, array)
    assert KeywordIndex.load(folder) is None
