"""The names stage on a store (analysis/names/stage.py): computed once per corpus state, the look-ups trends,
report and dashboard read, wiring's complete trends inputs, and names-table figures that equal the store's."""

from __future__ import annotations

import gzip
import itertools

import orjson
import pytest

from radar.analysis.names import stage
from radar.analysis.names.aliases import surface_key
from radar.analysis.names.extract import _TOKEN, code_links, is_candidate
from radar.analysis.names.find import MAX_ALIASES, PRIOR_MENTIONS
from radar.analysis.names.table import NameRow, Names
from radar.app import wiring
from radar.app.context import Radar
from radar.crawler.documents import Document, Documents
from radar.store import Store, Workspace
from tests.cli_helpers import run_cli
from tests.conftest import SNAPSHOT


def _paper(i: int, title: str, abstract: str, day: str) -> Document:
    return Document(id=f"2501.{i:05d}", kind="paper", source="arxiv", title=title, abstract=abstract, published=day)


PAPERS = [
    _paper(1, "ZetaPO: Zeta Policy Optimization", "We propose ZetaPO. Code: https://github.com/z/zp.", "2025-01-05"),
    _paper(2, "Better RL", "Our method outperforms ZetaPO and GRPO on GSM8K.", "2025-02-01"),
    _paper(3, "More RL", "It beats Zeta-PO and GRPO on GSM8K with Qwen3.5-9B and PPO.", "2025-03-01"),
    _paper(4, "Models", "We evaluate Qwen3.5 and GRPO on GSM8K with PPO.", "2025-04-01"),
    _paper(5, "Models 2", "Qwen-3.5 and PPO on MATH-500. See https://github.com/other/repo.", "2025-04-02"),
]


def test_stored_names_are_computed_once_per_corpus_state(workspace: Workspace) -> None:
    with workspace.store() as store:
        Documents(store).upsert(PAPERS)
        rows = stage.stored_names(store)
        state = Names(store).names_state()
        assert state.endswith(f"|{stage.NAMES_VERSION}") and {"ZetaPO", "GRPO", "Qwen3.5"} <= {r.name for r in rows}
        Names(store).replace_names([r for r in rows if r.name != "GRPO"], state)  # what is stored is what is read ...
        assert "GRPO" not in {r.name for r in stage.stored_names(store)}
        Documents(store).upsert([_paper(6, "Late", "GRPO again, with ZetaPO.", "2025-05-01")])
        again = {r.name: r for r in stage.stored_names(store)}  # ... until the documents change
        assert Names(store).names_state() != state and again["GRPO"].count == 4 and again["ZetaPO"].count == 4


def test_look_ups_resolve_any_spelling(workspace: Workspace) -> None:
    with workspace.store() as store:
        Documents(store).upsert(PAPERS)
        kind_of = stage.name_kinds(store)
        adoption = stage.name_adoption(store)
        rows = {r.name: r for r in stage.stored_names(store)}
    assert kind_of("Zeta-PO") == kind_of("ZetaPO") == rows["ZetaPO"].kind and kind_of("NoSuchName") is None
    assert kind_of("PPO") == "method"  # a labeled name (names_dev2) keeps its label
    recent, total, first = adoption("zetapo")  # type: ignore[misc]
    assert (total, first) == (2, "2025-01-05") and adoption("NoSuchName") is None
    # the introducing paper and the code links of its own abstract (not another paper's repository)
    assert rows["ZetaPO"].introduced_by == "2501.00001" and rows["ZetaPO"].code == ("https://github.com/z/zp",)
    assert rows["PPO"].introduced_by is None and rows["PPO"].code == ()


def test_wiring_hands_trends_the_kinds_of_names(workspace: Workspace) -> None:
    with workspace.store() as store:
        Documents(store).upsert(PAPERS)
        env = wiring.trends_env(Radar(workspace), store)
        assert env.introductions is not None  # the method cards, and ...
        assert Names(store).names_state() == ""  # ... the names are computed at the first kind look-up, not before
        # complete inputs: a test or benchmark that builds trends from wiring alone gets name kinds
        assert env.kind_of is not None and env.kind_of("PPO") == "method" and env.kind_of("Zeta-PO") is not None
        assert env.kind_of("NoSuchName") is None


def _spelled(doc: Document) -> set[str]:
    """The spelling keys of a document's candidate tokens (the names' definition of a mention), recomputed
    here from the stored text."""
    return {surface_key(t) for t in _TOKEN.findall(f"{doc.title} {doc.abstract}") if is_candidate(t)}


def _mentioning(docs: list[tuple[Document, set[str]]], keys: set[str]) -> list[Document]:
    return [d for d, spelled in docs if spelled & keys]


@pytest.fixture(scope="module")
def snapshot_store(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The first 3,000 papers of the bundled snapshot in a store."""
    ws, _ = Workspace.init(tmp_path_factory.mktemp("names-stage") / "ws")
    with gzip.open(SNAPSHOT, "rb") as fh, ws.store() as store:
        papers = [orjson.loads(line) for line in itertools.islice(fh, 3000)]
        Documents(store).upsert(
            Document(p["id"], "paper", "arxiv", p["title"], p["abstract"], p["published"]) for p in papers
        )
    return ws


def _checked(store: Store) -> tuple[list[tuple[Document, set[str]]], list[NameRow]]:
    docs = [(d, _spelled(d)) for d in Documents(store).scan()]
    rows = [r for r in stage.stored_names(store) if len(r.aliases) < MAX_ALIASES]
    return docs, rows


def test_every_count_of_the_names_table_equals_the_stores(snapshot_store: Workspace) -> None:
    with snapshot_store.store() as store:
        docs, rows = _checked(store)
    assert len(rows) >= 20
    last = max(d.published[:10] for d, _ in docs)
    for row in rows:
        mentioning = _mentioning(docs, {surface_key(s) for s in (row.name, *row.aliases)})
        assert row.count == len(mentioning), row.name
        first = min(mentioning, key=lambda d: (d.published[:10], d.id))
        assert (row.first_id, row.first_seen) == (first.id, first.published[:10]), row.name
        assert sum(c for _, c in row.series) == row.count and row.series[-1][0] == last[:7]
        assert row.recent_count <= row.count and row.baseline_mentions <= row.count


def test_introducing_papers_introduce_and_code_links_are_their_own(snapshot_store: Workspace) -> None:
    with snapshot_store.store() as store:
        docs, rows = _checked(store)
    by_id = {d.id: d for d, _ in docs}
    introduced = [r for r in rows if r.introduced_by]
    assert introduced
    for row in introduced:
        paper = by_id[row.introduced_by]  # type: ignore[index]
        spellings = {row.name, *row.aliases}
        text = paper.abstract
        said = any(s in text for s in spellings) or any(paper.title.startswith(s) for s in spellings)
        assert said and row.kind != "generic", row.name
        earlier = [d for d in _mentioning(docs, {surface_key(s) for s in spellings}) if d.published < paper.published]
        assert len(earlier) <= PRIOR_MENTIONS, row.name
        assert set(row.code) <= set(code_links(paper.abstract)), row.name  # its own abstract's links only
    assert all(not r.code for r in rows if not r.introduced_by)


def test_radar_methods_counts_equal_the_store(capsys: pytest.CaptureFixture[str], snapshot_store: Workspace) -> None:
    res = run_cli(capsys, "--workspace", str(snapshot_store.root), "methods", "--json")
    assert res.code == 0, res.err
    with snapshot_store.store() as store:
        docs = [(d, _spelled(d)) for d in Documents(store).scan()]
    for r in [r for r in res.json() if len(r["aliases"]) < MAX_ALIASES][:10]:
        assert r["count"] == len(_mentioning(docs, {surface_key(s) for s in (r["name"], *r["aliases"])}))
