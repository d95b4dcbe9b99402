"""The term cache tokenised in chunks, in worker processes for a large store (analysis/trends/tokenise.py): every
row's terms and every key's readable spelling are what one pass over the rows in order gives, wherever the chunks
are cut and whichever process tokenised them."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from radar.analysis.trends import cache
from radar.analysis.trends.cache import term_table
from radar.analysis.trends.terms import display, document_terms
from radar.analysis.trends.tokenise import chunk_terms, merge_surfaces
from radar.crawler.documents import DocumentHash, Documents
from radar.store import Store, Workspace
from tests.trends_data import base_corpus, make_doc

# phrases whose keys fold (Policies -> policy) next to the same keys written as themselves, so that which spelling a
# key reads as depends on the order the rows come in
PHRASES = ["Sparse Policies", "sparse policy", "reward models", "reward model", "Kernel fusions", "kernel fusion"]


def _one_pass(texts: list[tuple[str, str]]) -> tuple[list[set[str]], dict[str, str]]:
    surfaces: dict[str, str] = {}
    return [document_terms(t, a, surfaces) for t, a in texts], surfaces


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.sampled_from(PHRASES), min_size=1, max_size=4), min_size=1, max_size=12), st.data())
def test_chunks_merge_as_one_pass(rows: list[list[str]], data: st.DataObject) -> None:
    """Any cut of the rows into chunks, starting from any cached spellings (an incremental update)."""
    texts = [(". ".join(r), "") for r in rows]
    cuts = sorted(data.draw(st.sets(st.integers(1, max(1, len(texts) - 1)), max_size=4)))
    cached = data.draw(st.dictionaries(st.sampled_from(["sparse policy", "reward model"]), st.just("x"), max_size=2))
    one = dict(cached)
    want_keys = [document_terms(t, a, one) for t, a in texts]  # one pass from the cached spellings
    surfaces, found_keys = dict(cached), []
    for lo, hi in zip([0, *cuts], [*cuts, len(texts)], strict=True):
        chunk = chunk_terms(texts[lo:hi])
        bounds = zip(chunk.indptr[:-1], chunk.indptr[1:], strict=True)
        found_keys += [{chunk.keys[i] for i in chunk.indices[a:b]} for a, b in bounds]
        merge_surfaces(surfaces, chunk)
    assert found_keys == want_keys
    assert surfaces == one


def _docs(store: Store, n: int) -> None:
    """``base_corpus`` with the phrases above spread over its documents in a random order."""
    base_corpus(store)
    rng = random.Random(5)
    docs = list(Documents(store).scan())[:n]
    Documents(store).upsert([replace(d, abstract=f"{d.abstract} {rng.choice(PHRASES)}.") for d in docs])


@pytest.mark.parametrize("parallel", [False, True])
def test_the_table_is_what_one_pass_gives(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch, parallel: bool
) -> None:
    """Chunks of 37 rows, in two worker processes or in this one: each row holds the keys ``document_terms`` gives
    it and each key reads as one pass over the rows (in the store's order) spells it."""
    monkeypatch.setattr(cache, "CHUNK_ROWS", 37)
    monkeypatch.setattr(cache, "PARALLEL_MIN", 100 if parallel else 10**9)
    with workspace.store() as store:
        _docs(store, 400)
        table = term_table(workspace.term_cache_path, store)
        rows = list(Documents(store).text_rows())
    keysets, surfaces = _one_pass([(r.title, r.abstract) for r in rows])
    want = dict(zip((r.doc_id for r in rows), keysets, strict=True))
    for i, doc_id in enumerate(table.ids):
        cols = table.matrix.indices[table.matrix.indptr[i] : table.matrix.indptr[i + 1]]
        assert {table.term(int(c)) for c in cols} == want[doc_id]
    every = {k for keys in keysets for k in keys}
    assert {table.readable(c) for c in range(len(table.vocab))} == {display(k, surfaces) for k in every}
    assert all(table.readable(table.column(k)) == display(k, surfaces) for k in every)  # type: ignore[arg-type]


def test_a_chunks_columns_are_the_same_in_every_process() -> None:
    """A row's keys are numbered in the same order whatever the process's string hashing (a set's order is not):
    the same store gives the same columns in worker processes, in a fresh build and in an incremental one."""
    code = (
        "from radar.analysis.trends.tokenise import chunk_terms\n"
        "print(chunk_terms([('Sparse Policies for reward models', 'Kernel fusions beat a sparse policy with "
        "GRPO, DPO and PPO on MATH-500 and GSM8K.')]).keys)\n"
    )
    root = Path(__file__).resolve().parent.parent
    found = {
        subprocess.run(
            [sys.executable, "-c", code],
            cwd=root,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in (1, 2, 3)
    }
    assert len(found) == 1, found


def test_a_document_changed_while_the_table_is_updated_is_read_next_time(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process changes a document the update did not pick (then one it did) between the update's reads
    (right after the term cache read which documents changed: the second read of content hashes, the first is the
    documents' version): the next update still reads it, though the last change it saw is later."""
    rng = random.Random(1)
    docs = [make_doc(rng, f"2501.0000{i}", date(2025, 1, 1 + i), "arxiv", "cs.LG", []) for i in range(3)]
    with workspace.store() as store:
        Documents(store).upsert(docs)
        term_table(workspace.term_cache_path, store)
        Documents(store).upsert([replace(docs[0], abstract="A changed abstract about zorpo sharding.")])

    def another_process() -> None:
        with Store(workspace.db_path) as other, other.transaction() as conn:
            for doc_id, words, stamp in [
                ("2501.00001", "quorble", "2099-01-01"),
                ("2501.00000", "fizzle", "2099-02-01"),
            ]:
                conn.execute(
                    "UPDATE documents SET abstract = ?, content_hash = ?, changed_at = ? WHERE id = ?",
                    (f"An abstract about {words} lattices.", f"hash-{words}", f"{stamp}T00:00:00Z", doc_id),
                )

    reads: list[str] = []
    real = Documents.content_hashes_since

    def racing(self: Documents, changed_since: str) -> list[DocumentHash]:
        found = real(self, changed_since)
        reads.append(changed_since)
        if len(reads) == 2:
            another_process()
        return found

    with workspace.store() as store, monkeypatch.context() as m:
        m.setattr(Documents, "content_hashes_since", racing)
        term_table(workspace.term_cache_path, store)
    assert len(reads) == 2
    with workspace.store() as store:
        table = term_table(workspace.term_cache_path, store)
    row = table.ids.index("2501.00001")
    assert "quorble" in {
        table.term(int(c)) for c in table.matrix.indices[table.matrix.indptr[row] : table.matrix.indptr[row + 1]]
    }


def test_term_cache_workers_leave_ctrl_c_to_the_parent() -> None:
    """A worker ignores SIGINT: Ctrl-C interrupts the parent, which cancels the chunks not started."""
    import signal

    with cache._pool(1) as pool:
        assert pool.submit(signal.getsignal, signal.SIGINT).result() == signal.SIG_IGN
