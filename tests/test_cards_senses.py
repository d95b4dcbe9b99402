"""Cards belong to the sense later papers use: homonyms (GRPO, QAE), names in use before the stored papers begin
(DPO), names of several words (Dr. GRPO), on real papers of the snapshot and the shared corpus."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from pathlib import Path

import orjson
import pytest

from radar.analysis.contributions.cards import card_for, iso_week
from radar.analysis.contributions.extract import papers_naming
from radar.analysis.contributions.senses import same_sense, sense_key, senses_of
from radar.analysis.contributions.table import Contributions, MentionRow
from radar.analysis.contributions.update import name_key, update_contributions
from radar.analysis.contributions.week import week_cards
from radar.app.wiring import repro_presets
from radar.crawler.documents import Document, Documents
from radar.store import Workspace
from tests.cli_helpers import run_cli
from tests.snapshot_data import document_of, snapshot_rows

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ROOT / "tests" / "fixtures" / "contributions" / "papers.jsonl"  # shared-corpus papers (SOURCES.md)


def _corpus_doc(r: dict[str, object]) -> Document:
    return document_of(r, source="corpus")


def snapshot(ids: Collection[str] = (), naming: str = "", limit: int = 0, until: str = "9999") -> list[Document]:
    """Snapshot papers: those in ``ids``, and up to ``limit`` published before ``until`` whose text holds
    ``naming``."""
    out, found = [], 0
    for r in snapshot_rows():
        text = f"{r['title']} {r['abstract']}"
        if r["id"] in ids:
            out.append(_corpus_doc(r))
        elif naming and found < limit and naming in text and r["published"] < until:
            out.append(_corpus_doc(r))
            found += 1
    return out


def corpus_papers(*ids: str) -> list[Document]:
    rows = {r["id"]: r for r in map(orjson.loads, PAPERS.read_bytes().splitlines())}
    return [_corpus_doc(rows[i]) for i in ids]


def test_sense_keys_group_spellings_and_keep_homonyms_apart() -> None:
    relative = sense_key("Group Relative Policy Optimization")
    assert relative == sense_key("group-relative policy optimisation") == "group relat polic optim"
    assert same_sense(relative, sense_key("Group based Relative Policy Optimization"))
    assert not same_sense(relative, sense_key("Group Robust Preference Optimization"))
    assert not same_sense(sense_key("Quantile Advantage Estimation"), sense_key("Quantum Autoencoder"))
    # an undefined mention follows the definers of its own area, smoothed toward the overall majority
    rows = [
        MentionRow("1", "2025-01-01", False, "Quantum Autoencoder", "other"),
        MentionRow("2", "2025-02-01", False, "Quantum Autoencoder", "other"),
        MentionRow("3", "2025-03-01", False, "Quantile Advantage Estimation", "rl-post-training"),
        MentionRow("4", "2025-04-01", False, "", "rl-post-training"),
        MentionRow("5", "2025-05-01", False, "", "other"),
    ]
    senses = senses_of(rows)
    assert [s.expansion for s in senses] == ["Quantile Advantage Estimation", "Quantum Autoencoder"]  # lab first
    assert senses[0].ids == {"3", "4"} and senses[1].ids == {"1", "2", "5"}
    assert senses_of([MentionRow("1", "2025-01-01", False)])[0].key == ""  # nobody spells it out: one sense


@pytest.fixture(scope="module")
def grpo_store(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """DeepSeekMath (introduces Group Relative Policy Optimization beside its model), the paper introducing
    Group Robust Preference Optimization under the same acronym, and 40 later snapshot papers naming GRPO."""
    ws, _ = Workspace.init(tmp_path_factory.mktemp("grpo") / "ws")
    docs = snapshot({"2402.03300", "2405.20304"}, naming="GRPO", limit=40, until="2025-06-01")
    with ws.store() as store:
        Documents(store).upsert(docs)
        update_contributions(store)
    return ws


def test_grpo_is_deepseekmaths_and_the_homonym_is_named_beside_it(grpo_store: Workspace) -> None:
    with grpo_store.store() as store:
        card = card_for(store, "GRPO", repro_presets())
        robust = Contributions(store).contributions(["2405.20304"])["2405.20304"]
    assert robust.introduces and robust.name == "GRPO"  # a real introduction, of another GRPO
    assert (card.introduced_by, card.expansion) == ("2402.03300", "Group Relative Policy Optimization")
    assert "2405.20304" not in card.used_by and len(card.used_by) >= 30 and card.preset == "grpo"
    other = [o for o in card.other_senses if o.introduced_by == "2405.20304"]
    assert other and other[0].expansion == "Group Robust Preference Optimization" and other[0].papers == 1
    with grpo_store.store() as store:  # the homonym's own week lists it, counting its own sense only
        robust_card = next(c for c in week_cards(store, iso_week(robust.published), {}) if c.name == "GRPO")
    assert robust_card.introduced_by == "2405.20304" and robust_card.used_by == ()


def test_a_name_in_use_when_the_stored_papers_begin_was_introduced_before_them(workspace: Workspace) -> None:
    """DPO is named from the store's first week on; a later paper read as introducing DPO (active preference
    learning that defines DPO for its readers: the stored decision says so here, whatever the shipped model decides
    for that paper) is not its introduction, though fewer than ``KNOWN_BEFORE`` stored papers named it before: the
    card says DPO predates the stored papers, counts that paper among its users, and that week does not list it."""
    docs = snapshot({"2402.08114"}, naming="DPO", limit=10, until="2024-03-01")
    with workspace.store() as store:
        Documents(store).upsert(docs)
        update_contributions(store)
        row = Contributions(store).contributions(["2402.08114"])["2402.08114"]
        redefines = replace(row, introduces=True, name="DPO", name_key=name_key("DPO"), kind="method")
        Contributions(store).write_contributions(
            [redefines], Contributions(store).mentions_by_paper([row.doc_id]).get(row.doc_id, [])
        )
        card = card_for(store, "DPO", repro_presets())
        listed = week_cards(store, iso_week(row.published), {})
    assert (card.status, card.introduced_by) == ("before-corpus", None)
    assert card.expansion == "Direct Preference Optimization" and card.kind == "method"
    assert set(card.used_by) == {d.id for d in docs} and card.first_seen < "2024-01-29"
    assert "DPO" not in {c.name for c in listed}


def test_qae_shows_the_lab_sense_and_names_the_quantum_ones(workspace: Workspace) -> None:
    docs = corpus_papers("2504.17548", "2506.11730", "2509.16186", "2509.22611")
    with workspace.store() as store:
        Documents(store).upsert(docs)
        update_contributions(store)
        card = card_for(store, "qae", repro_presets())
    assert (card.name, card.introduced_by, card.expansion) == ("QAE", "2509.22611", "Quantile Advantage Estimation")
    assert card.kind == "method" and card.area == "rl-post-training"
    assert any(o.expansion == "Quantum Autoencoder" and o.papers == 2 for o in card.other_senses)


def test_dr_grpo_is_introduced_and_later_papers_are_found_by_its_phrase(workspace: Workspace) -> None:
    """A name of several words: the mentions table keys tokens ("GRPO"), so later papers naming "Dr. GRPO" are
    found by the phrase; GRPO's own papers are not counted for it."""
    later = snapshot({"2509.07558", "2510.06870"})
    plain = snapshot(naming="GRPO", limit=5, until="2025-03-01")
    docs = [*corpus_papers("2503.20783"), *later, *plain]
    with workspace.store() as store:
        Documents(store).upsert(docs)
        update_contributions(store)
        card = card_for(store, "Dr. GRPO", repro_presets())
    assert (card.introduced_by, card.kind, card.area) == ("2503.20783", "method", "rl-post-training")
    assert card.changes.startswith("an unbiased optimization method") and card.preset == "dr_grpo"
    assert set(card.used_by) == {"2509.07558", "2510.06870"}
    assert card.code == ("https://github.com/sail-sg/understand-r1-zero",)


def test_card_text_neutralises_control_characters(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Feed text on a card (title, changes) never sends an escape sequence, a carriage return or a bidi override
    to the terminal: each shows as its escape."""
    hostile = {
        "id": "2509.99001",
        "title": "ZetaPO: \x1b[31mred\x1b[0m policy\r optimization \u202eevil",
        "abstract": "We propose ZetaPO, a policy optimization method that \x1b]0;owned\x07 rewrites the title.",
        "published": "2025-09-24",
        "categories": ["cs.LG"],
        "authors": [],
    }
    papers = tmp_path / "hostile.jsonl"
    papers.write_bytes(orjson.dumps(hostile) + b"\n")
    ws = str(tmp_path / "ws")
    assert run_cli(capsys, "-w", ws, "init").code == 0
    assert run_cli(capsys, "-w", ws, "import", str(papers)).code == 0
    with Workspace.open(Path(ws)).store() as store:  # whatever ingest cleaned, put the hostile text back
        doc = Documents(store).get("2509.99001")
        assert doc is not None
        store.conn.execute("UPDATE documents SET title = ?, abstract = ? WHERE id = ?",
                           (hostile["title"], hostile["abstract"], doc.id))  # fmt: skip
        store.conn.commit()
    shown = {}
    for argv in (("--name", "ZetaPO"), ("--week", "2025-W39")):
        out = run_cli(capsys, "-w", ws, "methods", *argv)
        assert out.code == 0, out.err
        assert "ZetaPO" in out.out and not any(ch in out.out for ch in "\x1b\r\x07\u202e"), out.out
        shown[argv[0]] = out.out
    assert "\\x1b[31mred\\x1b[0m" in shown["--name"] and "\\u202eevil" in shown["--name"]  # visible, inert


def test_many_phrases_are_looked_up_in_one_pass(tmp_path: Path) -> None:
    """A month's cards name hundreds of multi-word names (the full corpus's cards 2,972): the phrase look-up
    finds each phrase's papers oldest first in one pass (an SQL expression per phrase raised "Expression tree is
    too large" on 2025-06's cards, and chunks of them took 15 minutes on the full corpus), wherever the phrase
    starts a token: after "(", "/", "," or a LaTeX brace, across a line break, followed by punctuation; not
    inside a word, not in papers before ``since``."""
    ws, _ = Workspace.init(tmp_path / "ws")
    docs = [
        Document(
            id=f"2506.{10000 + i}",
            kind="paper",
            source="test",
            title=f"Method Number{i} for reasoning",
            abstract=f"We propose Method Number{i}, which improves GRPO.",
            published=f"2025-06-{1 + i % 28:02d}T00:00:00Z",
        )
        for i in range(700)
    ]
    with ws.store() as store:
        Documents(store).upsert(docs)
        phrases = [f"Method Number{i}" for i in range(700)] + ["Not Stored"]
        found = papers_naming(Contributions(store).papers_since("2025-06-01"), phrases)
    assert len(found) == 700 and "Not Stored" not in found
    assert [p.doc_id for p in found["Method Number7"]] == ["2506.10007", *(f"2506.1007{k}" for k in range(10))][:11]
    shapes = {
        "2507.00001": ("Dr. GRPO, revisited", "We compare with DAPO."),
        "2507.00002": ("A study", "Unlike prior work (Dr.\nGRPO), we ..."),
        "2507.00003": ("Another study", "We follow Dr. GRPO's loss."),
        "2507.00004": ("Not it", "Our XDr. GRPO variant and Dr. GRP are different."),
        "2506.00005": ("Too early", "We use Dr. GRPO."),
        "2507.00006": ("Slashed", "Unlike PPO/Dr. GRPO, we ..."),
        "2507.00007": ("Listed", "Baselines: GRPO,Dr. GRPO and DAPO."),
        "2507.00008": ("Marked up", "We improve on \\textsc{Dr. GRPO} and ((Dr. GRPO))."),
    }
    with ws.store() as store:
        Documents(store).upsert(
            Document(
                id=i,
                kind="paper",
                source="test",
                title=t,
                abstract=a,
                published=f"2025-{i[2:4]}-15T00:00:00Z",
            )
            for i, (t, a) in shapes.items()
        )
        found = papers_naming(Contributions(store).papers_since("2025-07-01"), ["Dr. GRPO"])
    assert [p.doc_id for p in found["Dr. GRPO"]] == [
        "2507.00001",
        "2507.00002",
        "2507.00003",
        "2507.00006",
        "2507.00007",
        "2507.00008",
    ]
