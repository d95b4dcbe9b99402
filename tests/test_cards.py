"""Method cards and `radar methods --week/--name`: on real papers of the bundled snapshot, every number a card
shows is recomputed here from the stored documents' own text."""

from __future__ import annotations

import gzip
from datetime import date
from pathlib import Path

import orjson
import pytest

from radar.analysis.contributions.card import CardJson
from radar.analysis.contributions.cards import KNOWN_BEFORE, card_for, iso_week, parse_week, preset_for
from radar.analysis.contributions.errors import ContributionsError
from radar.analysis.contributions.extract import extract, phrase_mention, spelled_by
from radar.analysis.contributions.senses import senses_of
from radar.analysis.contributions.table import ContributionRow, Contributions, Mention, MentionRow
from radar.analysis.contributions.update import name_key, update_contributions
from radar.analysis.contributions.week import introduced_methods, week_cards
from radar.analysis.names.extract import _TOKEN, is_candidate
from radar.app.wiring import repro_presets
from radar.crawler.documents import Document, Documents
from radar.index.tags_table import Tags
from radar.store import Store, Workspace
from tests.cli_helpers import run_cli
from tests.snapshot_data import snapshot_documents

ROOT = Path(__file__).resolve().parents[1]
SNAPSHOT = ROOT / "data" / "snapshot.jsonl.gz"
W39 = "2025-W39"
W39_METHODS = {"QAE": "2509.22611", "NGRPO": "2509.18851", "RL-ZVP": "2509.21880", "VCRL": "2509.19803"}


def _corpus() -> list[dict[str, object]]:
    """The snapshot's papers of 2025-W39, those naming DAPO or GSPO, and DAPO's and GSPO's own papers."""
    start, end = parse_week(W39)
    out = []
    with gzip.open(SNAPSHOT, "rb") as fh:
        for line in fh:
            r = orjson.loads(line)
            day = date.fromisoformat(r["published"][:10])
            text = r["title"] + " " + r["abstract"]
            if start <= day <= end or "DAPO" in text or "GSPO" in text:
                out.append(r)
    return out


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cards") / "papers.jsonl.gz"
    with gzip.open(path, "wb") as fh:
        for r in _corpus():
            fh.write(orjson.dumps(r) + b"\n")
    return path


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory, corpus_file: Path) -> Path:
    path = tmp_path_factory.mktemp("cards-db") / "radar.db"
    docs = snapshot_documents(lambda r: True, corpus_file)
    with Store(path) as store:
        Documents(store).upsert(docs)
        update_contributions(store)
    return path


def _names_of(doc: Document) -> dict[str, tuple[bool, str]]:
    """The spelling keys a paper's own text names, each with (compares against it, the long form it spells out)."""
    ex = extract(doc.title, doc.abstract)
    out = {name_key(t): (False, "") for t in _TOKEN.findall(ex.text) if is_candidate(t)}
    for c in ex.candidates:
        key = name_key(c.surface)
        if key in out and "src:token" in c.features:
            compared, spelled = out[key]
            if c.expansion and spelled_by(c.surface, c.expansion):
                spelled = spelled or c.expansion
            out[key] = (compared or "compared" in c.features, spelled)
    return out


def test_every_card_number_equals_what_the_store_holds(store_path: Path) -> None:
    """Uses and comparisons are recomputed from the stored documents' text: the later papers (on or after the
    introduction, not the introducing paper) whose title or abstract names the card's name, in the card's sense
    (the long forms each paper spells out, read here from its text; its area from its stored contribution)."""
    with Store(store_path) as store:
        cards = week_cards(store, W39, repro_presets())
        cards.append(card_for(store, "DAPO", repro_presets()))
        docs = list(Documents(store).scan())
        areas = {i: r.area for i, r in Contributions(store).contributions([d.id for d in docs]).items()}
    published = {d.id: d.published[:10] for d in docs}
    names = {d.id: _names_of(d) for d in docs}
    checked = several = 0
    for card in cards:
        rows = []
        for d in docs:
            if " " in card.name:  # a name of several words: by its phrase
                named, compared = phrase_mention(d.title, d.abstract, card.name)
                spelled = ""
            else:
                named = name_key(card.name) in names[d.id]
                compared, spelled = names[d.id].get(name_key(card.name), (False, ""))
            if named or d.id == card.introduced_by:
                rows.append(MentionRow(d.id, published[d.id], compared, spelled, areas.get(d.id, "")))
        rows.sort(key=lambda m: (m.published, m.doc_id))
        senses = senses_of(rows)
        mine = next(s for s in senses if card.introduced_by in s.ids)
        later = [m for m in mine.mentions if m.doc_id != card.introduced_by and m.published >= card.introduced_on]
        assert sorted(card.used_by) == sorted(m.doc_id for m in later), card.name
        assert sorted(card.compared_by) == sorted(m.doc_id for m in later if m.compared), card.name
        assert CardJson.of(card).uses == len(later) and card.expansion == mine.expansion
        assert card.prior_mentions == sum(m.published < card.introduced_on for m in mine.mentions)
        checked += bool(later)
        several += len(senses) > 1
    assert checked >= 1 and several >= 1  # some card has later papers, some name more than one sense


def test_dapo_card_names_its_paper_its_preset_and_its_adopters(store_path: Path) -> None:
    with Store(store_path) as store:
        card = card_for(store, "dapo", repro_presets())  # any spelling
        intro = Documents(store).get("2503.14476")
    assert card.introduced_by == "2503.14476" and card.kind == "method" and card.area == "rl-post-training"
    assert card.preset == "dapo" and "DAPO" in card.preset_title
    assert len(card.used_by) >= 20 and card.compared_by and set(card.compared_by) <= set(card.used_by)
    assert intro is not None and all(link in intro.abstract for link in card.code)  # its own abstract's links only


def test_code_links_come_from_the_introducing_abstract_only(workspace: Workspace) -> None:
    intro = Document("2501.00001", "paper", "t", "ZetaPO: zeta policy optimization", "We propose ZetaPO, a policy "
                     "optimization method. Code: https://github.com/zeta/zetapo.", "2025-01-06T00:00:00Z")  # fmt: skip
    later = Document("2501.00002", "paper", "t", "Beyond ZetaPO", "We compare against ZetaPO and release "
                     "https://github.com/other/repo.", "2025-01-08T00:00:00Z")  # fmt: skip
    with workspace.store() as store:
        Documents(store).upsert([intro, later])
        update_contributions(store)
        card = card_for(store, "ZetaPO", {})
    assert card.code == ("https://github.com/zeta/zetapo",)
    assert card.used_by == ("2501.00002",) and card.compared_by == ("2501.00002",)
    assert card.preset == "" and CardJson.of(card).preset is None  # no preset covers it


def test_a_name_many_earlier_papers_used_is_not_new_unless_the_title_starts_with_it(workspace: Workspace) -> None:
    before = [
        Document(f"2501.{i:05d}", "paper", "t", f"Study {i}", "We train with OmegaRL on math.", "2025-01-06T00:00:00Z")
        for i in range(KNOWN_BEFORE)
    ]
    defines = Document("2502.00001", "paper", "t", "Entropy in reasoning", "We propose OmegaRL (Omega "
                       "Reinforcement Learning), a new recipe for reasoning.", "2025-02-04T00:00:00Z")  # fmt: skip
    reused = Document("2502.00002", "paper", "t", "OmegaRL: a robot controller", "We present a controller.",
                      "2025-02-05T00:00:00Z")  # fmt: skip
    with workspace.store() as store:
        Documents(store).upsert([*before, defines, reused])
        update_contributions(store)  # the mentions; the two introductions are written as the model would
        Contributions(store).write_contributions(
            [
                ContributionRow(
                    d.id,
                    d.content_hash,
                    "test",
                    True,
                    "OmegaRL",
                    "omegarl",
                    (),
                    "method",
                    "rl-post-training",
                    (),
                    "a recipe",
                    "",
                    (),
                    0.9,
                    0.9,
                )  # fmt: skip
                for d in (defines, reused)
            ],
            [Mention(d.id, "omegarl", False) for d in (defines, reused)],
        )
        cards = week_cards(store, iso_week("2025-02-04"), {})
    assert [c.introduced_by for c in cards] == ["2502.00002"]  # the title-prefix paper only
    assert cards[0].prior_mentions == KNOWN_BEFORE + 1  # the 20 studies and the defining paper


def test_introduced_methods_are_a_periods_new_methods_in_the_lab_areas(store_path: Path) -> None:
    start, end = parse_week(W39)
    with Store(store_path) as store:
        found = introduced_methods(store, start.isoformat(), end.isoformat(), repro_presets())
    assert set(W39_METHODS) <= {c.name for c in found}
    assert all(c.kind in ("method", "system") and c.in_lab_areas and c.new for c in found)


def test_weeks_and_presets() -> None:
    assert parse_week("2025-W39") == (date(2025, 9, 22), date(2025, 9, 28))
    assert iso_week("2025-09-28T12:00:00Z") == "2025-W39"
    for bad in ("2025-39", "2025-W54", "W39", ""):
        with pytest.raises(ContributionsError, match="YYYY-Www"):
            parse_week(bad)
    presets = repro_presets()
    assert preset_for("Dr. GRPO", presets)[0] == "dr_grpo" and preset_for("GSPO", presets)[0] == "gspo"
    assert preset_for("CISPO", presets)[0] == "cispo" and preset_for("TEMPO", presets) == ("", "")
    # the presets of 2025-26 methods carry the names their papers and cards use (repro/presets_2025.toml)
    for name, preset in {"QAE": "qae", "PSPO": "pspo", "RL-ZVP": "rl-zvp", "VCRL": "vcrl", "NGRPO": "ngrpo"}.items():
        assert preset_for(name, presets)[0] == preset


def test_radar_methods_week_and_name(capsys: pytest.CaptureFixture[str], tmp_path: Path, corpus_file: Path) -> None:
    ws = str(tmp_path / "ws")
    assert run_cli(capsys, "-w", ws, "init").code == 0
    imported = run_cli(capsys, "-w", ws, "import", str(corpus_file), "--json")
    assert imported.code == 0 and imported.json()["contributions"] == imported.json()["added"]  # decided at import
    res = run_cli(capsys, "-w", ws, "methods", "--week", W39, "--json")
    assert res.code == 0, res.err
    cards = res.json()
    assert {"name", "kind", "introduced_by", "area", "changes", "builds_on", "code"} <= set(cards[0])
    assert {c["name"]: c["introduced_by"] for c in cards if c["name"] in W39_METHODS} == W39_METHODS
    presets = {c["name"]: c["preset"] for c in cards if c["name"] in W39_METHODS}
    assert presets == {"QAE": "qae", "NGRPO": "ngrpo", "RL-ZVP": "rl-zvp", "VCRL": "vcrl"}
    assert all(c["plugin_point"] == "" for c in cards if c["preset"])  # a preset exists: no work to size
    assert {c["plugin_point"] for c in cards} <= {"", "advantage", "ratio/loss", "batch"}
    text = run_cli(capsys, "-w", ws, "methods", "--week", W39)
    assert text.code == 0 and "QAE" in text.out and "in the lab's areas" in text.out
    one = run_cli(capsys, "-w", ws, "methods", "--name", "DAPO", "--json")
    assert one.code == 0 and one.json()["introduced_by"] == "2503.14476" and one.json()["preset"] == "dapo"
    shown = run_cli(capsys, "-w", ws, "methods", "--name", "DAPO")
    assert shown.code == 0 and "reproduction preset: dapo" in shown.out
    for argv, fix in (
        (("--week", "2025-39"), "YYYY-Www"),
        (("--name", "NoSuchMethodXYZ"), "radar methods --week"),
        (("--week", W39, "--name", "DAPO"), "not both"),
        (("--week", W39, "--kind", "method"), "drop them"),
    ):
        bad = run_cli(capsys, "-w", ws, "methods", *argv)
        assert bad.code == 1 and fix in bad.err and len(bad.err.strip().splitlines()) == 1, (argv, bad.err)
    listing = run_cli(capsys, "-w", ws, "methods", "--json")  # the names listing still works
    assert listing.code == 0 and isinstance(listing.json(), list)
    helped = run_cli(capsys, "methods", "--help")
    assert helped.code == 0 and "--week" in helped.out and "--name" in helped.out


def test_summary_endpoint_rewrites_a_cards_line_once_and_failures_keep_the_extractive_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store_path: Path
) -> None:
    import json

    from radar.store.config import DEFAULT_CONFIG_TEXT
    from tests.report_servers import WebhookSink

    with Store(store_path) as store:
        extractive = card_for(store, "QAE", {}).changes
    with gzip.open(SNAPSHOT, "rb") as fh:
        rows = [orjson.loads(line) for line in fh if b'"2509.22611"' in line]
    papers = tmp_path / "qae.jsonl"
    papers.write_bytes(orjson.dumps(rows[0]) + b"\n")
    with WebhookSink() as llm:  # stands in for a local OpenAI-compatible server's /v1/chat/completions
        llm.answer = json.dumps({"choices": [{"message": {"content": "Replaces GRPO's mean baseline."}}]}).encode()
        base = llm.url.rsplit("/hooks", 1)[0]
        toml = f'[report]\nsummary_endpoint = "{base}/v1"\nsummary_model = "tiny"\nsummary_timeout_s = 5\n'
        for name, status in (("ok", 200), ("down", 503)):
            llm.status = status
            ws, _ = Workspace.init(tmp_path / name, config_text=DEFAULT_CONFIG_TEXT + "\n" + toml)
            assert run_cli(capsys, "-w", str(ws.root), "import", str(papers)).code == 0
            asked = len(llm.posts)
            got = run_cli(capsys, "-w", str(ws.root), "methods", "--name", "QAE", "--json")
            assert got.code == 0, got.err
            if status == 200:
                assert got.json()["changes"] == "Replaces GRPO's mean baseline." and len(llm.posts) == asked + 1
                again = run_cli(capsys, "-w", str(ws.root), "methods", "--week", W39, "--json").json()
                assert again[0]["changes"] == "Replaces GRPO's mean baseline." and len(llm.posts) == asked + 1
            else:
                assert got.json()["changes"] == extractive  # the endpoint failed: the abstract's own line


def test_stored_tags_move_a_card_into_the_lab_areas_and_leave_its_kind(workspace: Workspace) -> None:
    """Tags place a paper in the lab's areas; the kind stays the model's (a method of a paper tagged
    accelerator-hardware is not made hardware: the taxonomy counts EDA and co-design software there too)."""
    docs = [
        Document("2501.00011", "paper", "t", "Sylph: an accelerator for attention", "We propose Sylph.",
                 "2025-01-06T00:00:00Z"),
        Document("2501.00012", "paper", "t", "Wisp: a method", "We propose Wisp.", "2025-01-06T00:00:00Z"),
    ]  # fmt: skip
    with workspace.store() as store:
        Documents(store).upsert(docs)
        update_contributions(store)
        Contributions(store).write_contributions(
            [
                ContributionRow(
                    d.id, d.content_hash, "test", True, n, n.lower(), (), "method", "other", (), "", "", (), 0.9, 0.9
                )  # fmt: skip
                for d, n in zip(docs, ("Sylph", "Wisp"), strict=True)
            ],
            [],
        )
        Tags(store).save_decisions("test", ["2501.00011"], [("2501.00011", "accelerator-hardware", 0.9, "model")])
        groups = {"accelerator-hardware": "hardware-systems", "graphics-xr": "other"}
        cards = {c.name: c for c in week_cards(store, iso_week("2025-01-06"), {}, groups)}
        untagged = {c.name: c for c in week_cards(store, iso_week("2025-01-06"), {})}
    assert (cards["Sylph"].kind, cards["Sylph"].area) == ("method", "hardware-systems")
    assert (cards["Wisp"].kind, cards["Wisp"].area) == ("method", "other")
    assert untagged["Sylph"].area == "other"  # without the taxonomy's groups the model's area stands
    assert list(cards) == ["Sylph", "Wisp"]  # the lab's areas first


def test_a_name_introduced_beside_the_main_one_has_its_own_card(workspace: Workspace) -> None:
    """CISPO is introduced by the MiniMax-M1 paper beside its model: `radar methods --name CISPO` finds it."""
    docs = snapshot_like(["2506.13585"])
    later = Document("2507.00001", "paper", "t", "Clipping revisited", "We compare GRPO with CISPO on math.",
                     "2025-07-02T00:00:00Z")  # fmt: skip
    with workspace.store() as store:
        Documents(store).upsert([*docs, later])
        update_contributions(store)
        row = Contributions(store).contributions(["2506.13585"])["2506.13585"]
        assert row.introduces and row.name == "MiniMax-M1" and "CISPO" in row.also
        card = card_for(store, "cispo", repro_presets())
    assert (card.name, card.introduced_by, card.preset) == ("CISPO", "2506.13585", "cispo")
    assert "MiniMax-M1" in card.also and card.used_by == ("2507.00001",)
    assert row.kind == "model" and card.kind == "method"  # its own kind, not the model's the paper releases
    assert card.changes.startswith("a novel RL algorithm") and card.changes != row.changes  # CISPO's own clause


def snapshot_like(ids: list[str]) -> list[Document]:
    out = []
    with gzip.open(SNAPSHOT, "rb") as fh:
        for line in fh:
            r = orjson.loads(line)
            if r["id"] in ids:
                out.append(Document(r["id"], "paper", "snapshot", r["title"], r["abstract"], r["published"],
                                    categories=tuple(r["categories"])))  # fmt: skip
    return out
