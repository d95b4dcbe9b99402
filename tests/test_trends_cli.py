"""`radar trends` through the real CLI: the JSON contract, the table, and one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from radar.crawler.documents import Documents
from tests.cli_helpers import run_cli

ITEM_KEYS = {"term", "score", "recent_count", "recent_share", "baseline_share", "first_seen", "example_ids"}


@pytest.fixture
def snap_ws(tmp_path: Path, small_snapshot: Path, capsys: pytest.CaptureFixture[str]) -> str:
    root = str(tmp_path / "ws")
    assert run_cli(capsys, "--workspace", root, "init").code == 0
    assert run_cli(capsys, "--workspace", root, "import", str(small_snapshot)).code == 0
    return root


def test_json_contract(snap_ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    from radar.store import Workspace
    from tests.trends_data import base_corpus, tag

    with Workspace.open(Path(snap_ws)).store() as store:
        base_corpus(store)  # synthetic 2025-01..06 documents with a rising term and a new method
        ids = [d.id for d in Documents(store).scan()]
        tag(store, [(i, "rl-policy-optimization") for i in ids[::7]])
    res = run_cli(capsys, "--workspace", snap_ws, "trends", "--window", "month", "--as-of", "2025-06-30", "--json")
    assert res.code == 0, res.err
    doc = res.json()
    assert {"as_of", "emerging", "declining", "tags", "topics", "new_methods"} <= set(doc)
    assert isinstance(doc["as_of"], str) and len(doc["as_of"]) == 10
    for key in ("emerging", "declining"):
        assert isinstance(doc[key], list)
        for item in doc[key]:
            assert set(item) >= ITEM_KEYS
            assert isinstance(item["term"], str) and isinstance(item["score"], float)
            assert isinstance(item["recent_count"], int) and isinstance(item["example_ids"], list)
    series = doc["tags"]["rl-policy-optimization"]
    assert series and {"period", "count", "share"} <= set(series[-1])
    assert sum(p["count"] for p in series) > 0
    group = doc["groups"]["rl-post-training"]  # tag groups from the tagger's taxonomy
    assert [p["count"] for p in group] == [p["count"] for p in series]  # the only tag of the group in use
    assert isinstance(doc["topics"], list) and doc["topics_note"]  # nothing embedded: said why
    assert doc["emerging"] and doc["new_methods"]  # the loops above and below check something
    for m in doc["new_methods"]:
        assert {"name", "first_seen", "first_id", "count", "recent_count", "growth", "example_ids"} <= set(m)
    # the table
    res = run_cli(capsys, "--workspace", snap_ws, "trends", "--window", "month")
    assert res.code == 0 and "Emerging terms" in res.out and "trends as of" in res.out


def test_as_of_and_month_window(snap_ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    from radar.store import Workspace
    from tests.trends_data import base_corpus

    with Workspace.open(Path(snap_ws)).store() as store:
        base_corpus(store)  # 2025-01..06: the rise and the new method span the as-of day
    res = run_cli(capsys, "--workspace", snap_ws, "trends", "--as-of", "2025-06-15", "--window", "month", "--json")
    assert res.code == 0, res.err
    doc = res.json()
    assert doc["as_of"] == "2025-06-15" and doc["window"] == "month" and doc["recent"]["start"] == "2025-05-16"
    shown = [i for key in ("emerging", "declining") for e in doc[key] for i in e["example_ids"]]
    shown += [m["first_id"] for m in doc["new_methods"]] + [i for m in doc["new_methods"] for i in m["example_ids"]]
    assert shown
    with Workspace.open(Path(snap_ws)).store() as store:
        assert all(d.published[:10] <= "2025-06-15" for d in Documents(store).of(shown).values())
        assert any(d.published[:10] > "2025-06-15" for d in Documents(store).scan())  # later documents exist
    assert all(p["period"] <= "2025-06" for series in doc["tags"].values() for p in series)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--as-of", "2025-02-30"], "--as-of '2025-02-30' is not a date; use YYYY-MM-DD"),
        (["--window", "year"], "unknown window 'year'; use one of: week, month"),
        (["--as-of", "2001-01-01"], "is before the first document"),
    ],
)
def test_bad_input_is_one_line(snap_ws: str, capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    res = run_cli(capsys, "--workspace", snap_ws, "trends", *argv)
    assert res.code == 1 and res.out == ""
    assert res.err.count("\n") == 1 and message in res.err and res.err.startswith("radar: error: ")


def test_empty_workspace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = str(tmp_path / "empty")
    run_cli(capsys, "--workspace", root, "init")
    res = run_cli(capsys, "--workspace", root, "trends")
    assert res.code == 1 and "no documents yet" in res.err and "radar import" in res.err


def test_bad_trends_config_is_one_line(snap_ws: str, capsys: pytest.CaptureFixture[str]) -> None:
    config = Path(snap_ws) / "radar.toml"
    config.write_text(config.read_text(encoding="utf-8") + "\n[trends]\nmin_ratio = 0.5\n", encoding="utf-8")
    res = run_cli(capsys, "--workspace", snap_ws, "trends")
    assert res.code == 1 and "[trends] min_ratio must be > 1" in res.err and res.err.count("\n") == 1
