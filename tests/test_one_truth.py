"""One workspace, one week, three surfaces: the report, `radar trends --week` and the dashboard show the same figures
(documents, each tag's and group's count and change in share, emerging terms, topics), the brief repeats the table,
the report's "New this week", `radar methods --week` and the dashboard's Methods page name the same methods, and a
paper announced after the week's end is in none of them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from radar.analysis.trends.result import TagTrend, share_change
from radar.app.context import Radar
from radar.app.dashboard import MAIN_SCRIPT, data
from radar.crawler.documents import Document, Documents
from radar.index.embeddings import Embeddings
from radar.store import Workspace
from radar.store.dates import entered, entered_sql
from radar.store.models import utc_now
from tests.cli_helpers import run_cli

WEEK = "2024-W07"  # Mon 12 - Sun 18 Feb 2024, inside the first 500 snapshot papers
HELD = "2403.00001"  # submitted in W07, announced (its id's month) in March: not in W07
HELD_INTRO = "2403.00002"  # ... and one that introduces a method: not among W07's cards either
RULES = {
    "rl-policy-optimization": re.compile(r"reinforcement learning|policy optimization|\bRLHF\b|\bPPO\b", re.I),
    "inference-serving": re.compile(r"\binference\b|serving|KV cache", re.I),
    "model-compression": re.compile(r"quantiz|pruning|distillation", re.I),
    "llm-reasoning": re.compile(r"reasoning|chain-of-thought", re.I),
}


def _vectors(ws: Workspace) -> None:
    """Vectors around six centres for the workspace's model id (topics need embeddings; the model is not run)."""
    from radar.index.embedder import model_id_for, resolve_model_dir

    cfg = Radar(ws).settings.embedding
    model = model_id_for(cfg, resolve_model_dir(cfg.model), int8=True)
    rng = np.random.default_rng(5)
    centres = rng.normal(size=(6, 384)).astype(np.float32)
    with ws.store() as store:
        rows = []
        for i, d in enumerate(Documents(store).scan()):
            v = centres[i % 6] + 0.8 * rng.normal(size=384).astype(np.float32)
            rows.append((d.id, model, d.content_hash, (v / np.linalg.norm(v)).astype(np.float32).tobytes()))
        Embeddings(store).save(rows)


@pytest.fixture(scope="module")
def truth(small_snapshot: Path, tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The first 500 snapshot papers, tagged by keyword rules, with vectors; one paper held in moderation."""
    from radar.app.cli import main

    root = tmp_path_factory.mktemp("truth") / "ws"
    assert main(["--workspace", str(root), "init"]) == 0
    assert main(["--workspace", str(root), "import", str(small_snapshot)]) == 0
    ws = Workspace.open(root)
    with ws.store() as store:
        held = Document(
            id=HELD,
            kind="paper",
            source="arxiv",
            title="Reinforcement learning for quantized KV cache serving, held in moderation",
            abstract="A policy optimization method for inference serving, submitted in February.",
            published="2024-02-14T10:00:00Z",
            url=f"https://arxiv.org/abs/{HELD}",
        )
        held_intro = Document(
            id=HELD_INTRO,
            kind="paper",
            source="arxiv",
            title="HELDPO: Held Policy Optimization for Reinforcement Learning with Verifiable Rewards",
            abstract="We propose HELDPO, a policy optimization algorithm for reinforcement learning with verifiable "
            "rewards of large language models that improves on GRPO.",
            published="2024-02-15T10:00:00Z",
            url=f"https://arxiv.org/abs/{HELD_INTRO}",
        )
        Documents(store).upsert([held, held_intro])
        rows = [
            (d.id, tag)
            for d in Documents(store).scan(kind="paper")
            for tag, pat in RULES.items()
            if pat.search(d.title + " " + d.abstract)
        ]
        with store.transaction() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO document_tags (doc_id, tag, score, origin, created_at) "
                "VALUES (?, ?, 0.9, 'rule', ?)",
                [(i, t, utc_now()) for i, t in rows],
            )
    _vectors(ws)
    return ws


def _cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    res = run_cli(capsys, *argv)
    assert res.code == 0, res.err
    return json.loads(res.out)


def _frame(at: AppTest, *columns: str) -> Any:
    return next(d.value for d in at.dataframe if set(columns) <= set(d.value.columns))


def test_report_cli_and_dashboard_show_the_same_week(
    truth: Workspace, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = truth
    root = str(ws.root)
    built = _cli_json(capsys, "--workspace", root, "report", "--week", WEEK, "--json")
    report = json.loads(Path(built["paths"]["json"]).read_text())
    cli = _cli_json(capsys, "--workspace", root, "trends", "--week", WEEK, "--json")

    # the dashboard reads what the weekly job kept: computing trends on open would fail here
    from radar.app import period_trends

    def no_compute(*_: Any, **__: Any) -> None:
        raise AssertionError("the dashboard computed trends on open")

    monkeypatch.setattr(period_trends, "compute", no_compute)
    monkeypatch.setenv("RADAR_HOME", root)
    at = AppTest.from_file(str(MAIN_SCRIPT), default_timeout=180).run()
    assert not at.exception, [e.value for e in at.exception]
    assert data.md(WEEK) in " ".join(c.value for c in at.caption)  # it opens on the report's week

    # documents: the report's count, the trends' recent window, the dashboard's metric
    docs = report["headline"]["documents"]
    assert cli["tags"]["recent"]["documents"] == docs
    assert next(m.value for m in at.metric if m.label == "Documents") == f"{docs:,}"

    # each tag: count and change in share, in the same words on all three
    cli_tags = {t["tag"]: t for t in cli["tags"]["tag_trends"]}
    shown_tags = {r["tag"]: r for r in _frame(at, "tag", "change in share").to_dict("records")}
    assert set(RULES) <= set(cli_tags)
    for row in report["tag_volume"]:
        if row["tag"] not in cli_tags:
            continue
        found = cli_tags[row["tag"]]
        assert row["count"] == found["recent_count"], row["tag"]
        assert row["change"] == share_change(msgspec.convert(found, TagTrend))
        assert shown_tags[row["tag"]]["papers"] == row["count"]
        assert shown_tags[row["tag"]]["change in share"] == row["change"]
    groups = {g["tag"]: g for g in cli["tags"]["group_trends"]}
    for g in report["headline"]["groups"]:
        assert g["change"] == share_change(msgspec.convert(groups[g["group"]], TagTrend))

    # the brief repeats the table: its tag line carries a row's own change text
    tag_lines = [b["text"] for b in report["summary"] if "share" in b["text"] or "change" in b["text"]]
    assert tag_lines and any(row["change"] and row["change"] in tag_lines[0] for row in report["tag_volume"])

    # terms and topics: the report's are the trends' (the report keeps the profile's topics)
    terms = cli["terms"]
    assert [e["term"] for e in report["trends"]["emerging"]] == [e["term"] for e in terms["emerging"][:10]]
    topics = {t["id"]: t for t in terms["topics"]}
    assert topics, terms["topics_note"]
    for t in report["trends"]["topics"]:
        assert (t["size"], t["recent_size"], t["label"]) == (
            topics[t["id"]]["size"],
            topics[t["id"]]["recent_size"],
            topics[t["id"]]["label"],
        )
    table = _frame(at, "topic")
    assert {(r["id"], r["papers"], r["recent"]) for r in table.to_dict("records")} == {
        (t["id"], t["size"], t["recent_size"]) for t in terms["topics"]
    }

    # the week's method cards: the report's New this week, `radar methods --week --json`, the dashboard's Methods page
    cards = run_cli(capsys, "--workspace", root, "methods", "--week", WEEK, "--json")
    assert cards.code == 0, cards.err
    listed = [c["name"] for c in json.loads(cards.out)]
    section = report["new_this_week"]
    in_report = [c["name"] for key in ("cards", "compact", "more", "others") for c in section[key]]
    assert listed and sorted(in_report) == sorted(listed) and section["total"] == len(listed)
    at.switch_page("page_methods.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert list(_frame(at, "method", "paper")["method"]) == listed  # the CLI's order: the lead's reading order
    assert "HELDPO" not in listed

    # a paper submitted in W07 but announced in March is in none of them
    listed = {p["id"] for p in report["top_overall"]} | {p["id"] for s in report["top_papers"] for p in s["papers"]}
    assert HELD not in listed
    with ws.store() as store:
        in_week = Documents(store).matching(since="2024-02-12T00:00:00Z", until="2024-02-18T23:59:59Z")
        in_march = Documents(store).matching(since="2024-03-01T00:00:00Z", until="2024-03-03T23:59:59Z")
    assert HELD not in in_week and HELD in in_march and len(in_week) == docs
    march = run_cli(capsys, "--workspace", root, "methods", "--week", "2024-W09", "--json")
    assert "HELDPO" in [c["name"] for c in json.loads(march.out)]  # listed in the week it was announced


def test_the_entry_day_in_sql_is_the_rule_in_python(tmp_path: Path) -> None:
    """store.dates: the SQL expression the store filters by and the Python rule the term table uses agree."""
    import sqlite3

    cases = [
        ("2510.05109", "2025-09-25T00:00:00Z", "2025-10-01T00:00:00Z"),  # held in moderation: its id's month
        ("2509.22611", "2025-09-26T00:00:00Z", "2025-09-26T00:00:00Z"),
        ("2509.12345", "2025-10-02T00:00:00Z", "2025-10-02T00:00:00Z"),  # a listing date after the id month
        ("2412.0001", "2024-11-30T23:00:00Z", "2024-12-01T00:00:00Z"),  # 4-digit numbers (before 2015: 0704.0001)
        ("cs/0601001", "2006-01-01T00:00:00Z", "2006-01-01T00:00:00Z"),  # old-style id: its date
        ("post:abc", "2025-01-01T00:00:00Z", "2025-01-01T00:00:00Z"),
        ("2513.00001", "2025-01-01T00:00:00Z", "2025-01-01T00:00:00Z"),  # no month 13: its date
    ]
    conn = sqlite3.connect(tmp_path / "x.db")
    conn.execute("CREATE TABLE documents (id TEXT, published TEXT)")
    conn.executemany("INSERT INTO documents VALUES (?, ?)", [(i, p) for i, p, _ in cases])
    got = dict(conn.execute(f"SELECT d.id, {entered_sql('d')} FROM documents d"))
    for doc_id, published, expected in cases:
        assert entered(doc_id, published) == expected, doc_id
        assert got[doc_id] == expected, doc_id
