"""Framework sources: a repository's releases and commits Atom feeds crawled into their own tables, matched to the
method cards with sense rules, shown as a card's ``adopted``, and used by the "adopt"/"evaluate" rules.

The feeds are recorded from real history (tests/data/frameworks, tests/data/SOURCES.md: TRL's main branch
2025-03-15..2025-12-12 and its releases, verl's December 2025), served by the local test server; the papers are
the bundled snapshot's (real arXiv papers)."""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from radar.analysis.contributions.adoptions import Adoptions
from radar.analysis.contributions.frameworks import Matcher, is_word
from radar.app.cli import main
from radar.crawler.config import FrameworkSource, crawler_config
from radar.crawler.documents import Documents
from radar.crawler.frameworks import FrameworkEntries, FrameworkEntry
from radar.crawler.state import CrawlStates
from radar.reports.recommend import Evidence, decide
from radar.reports.runs import RunSummary
from radar.store import ConfigError, Workspace, parse_config
from tests.cli_helpers import run_cli
from tests.conftest import FAST_CRAWL, make_workspace
from tests.feedserver import FeedServer, Reply
from tests.test_untrusted_net import Canary

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "frameworks"
SNAPSHOT = ROOT / "data" / "snapshot.jsonl.gz"
NAMED = re.compile(r"(?<![A-Za-z0-9])(DAPO|GSPO|SAPO|SPARK|Dr\. ?GRPO)(?![A-Za-z0-9])")
GRPO = re.compile(r"(?<![A-Za-z0-9])GRPO(?![A-Za-z0-9])")
TRL = "/huggingface/trl"
DAPO_COMMIT = "https://github.com/huggingface/trl/commit/2324245ca4d2c8f9c3ed2a5b1a7a8b7f0b0c8dd9"


def _feed(name: str) -> bytes:
    return gzip.decompress((DATA / f"{name}.atom.gz").read_bytes())


def _source(url: str, name: str = "trl", area: str = "rl-post-training", label: str = "TRL") -> str:
    return f'[[sources]]\nname = "{name}"\ntype = "framework"\nurl = "{url}"\narea = "{area}"\nlabel = "{label}"\n'


@pytest.fixture(scope="module")
def papers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The snapshot's papers naming DAPO, GSPO, SAPO, SPARK or Dr. GRPO, and 150 naming GRPO (real papers)."""
    path = tmp_path_factory.mktemp("fw-papers") / "papers.jsonl.gz"
    grpo = 0
    with gzip.open(SNAPSHOT, "rb") as src, gzip.open(path, "wb") as dst:
        for line in src:
            r = orjson.loads(line)
            text = r["title"] + " " + r["abstract"]
            if NAMED.search(text) or (GRPO.search(text) and grpo < 150):
                grpo += not NAMED.search(text)
                dst.write(line)
    return path


@pytest.fixture(scope="module")
def feeds() -> Iterator[FeedServer]:
    server = FeedServer().start()
    server.static(f"{TRL}/commits/main.atom", _feed("trl_commits_main"), "application/atom+xml")
    server.static(f"{TRL}/releases.atom", _feed("trl_releases"), "application/atom+xml")
    server.static("/volcengine/verl/commits/main.atom", _feed("verl_commits_main"), "application/atom+xml")
    server.static(
        "/volcengine/verl/releases.atom", b'<feed xmlns="http://www.w3.org/2005/Atom"><title>r</title></feed>'
    )
    yield server
    server.stop()


@pytest.fixture(scope="module")
def crawled(
    tmp_path_factory: pytest.TempPathFactory, papers: Path, feeds: FeedServer
) -> Iterator[tuple[Workspace, dict[str, object]]]:
    """A workspace of the papers, TRL and verl crawled (`radar crawl --source trl`, then verl)."""
    root = tmp_path_factory.mktemp("fw-ws") / "ws"
    sources = _source(feeds.url + TRL) + _source(feeds.url + "/volcengine/verl", "verl", label="verl")
    ws = make_workspace(root, sources)
    assert main(["-w", str(ws.root), "import", str(papers)]) == 0
    with ws.store() as store:
        before = Documents(store).count()
    assert main(["-w", str(ws.root), "crawl", "--source", "trl", "--json"]) == 0
    with ws.store() as store:
        crawl = CrawlStates(store).get("trl")
    yield ws, {"documents": before, "summary": crawl.last_summary}


def test_crawl_source_trl_stores_entries_and_cards_show_adopted(
    crawled: tuple[Workspace, dict[str, object]], capsys: pytest.CaptureFixture[str]
) -> None:
    ws, facts = crawled
    assert str(facts["summary"]).startswith("trl: 814 new")  # every commit of the recording, every release
    with ws.store() as store:
        assert Documents(store).count() == facts["documents"]  # entries are not documents: never indexed or searched
        counts = Adoptions(store).framework_counts()
    assert counts["TRL"][0] == 814 and 0 < counts["TRL"][1] < 814  # entries naming no card are kept
    for name, day, subject in (
        ("DAPO", "2025-08-22", "DAPO loss type (#3938)"),
        ("GSPO", "2025-07-27", "GSPO (#3775)"),
        ("Dr. GRPO", "2025-03-22", "Add option not to scale rewards (Dr. GRPO) (#3135)"),
    ):
        card = run_cli(capsys, "-w", str(ws.root), "methods", "--name", name, "--json").json()
        first = card["adopted"][0]
        assert first["framework"] == "TRL" and first["date"] == day and first["kind"] == "commit", (name, first)
        assert first["text"].endswith(subject) and first["link"].startswith("https://github.com/huggingface/trl/")
        assert all(a["date"] >= day for a in card["adopted"])
    dapo = run_cli(capsys, "-w", str(ws.root), "methods", "--name", "DAPO", "--json").json()
    assert dapo["introduced_by"] == "2503.14476"
    assert any(a["kind"] == "release" and a["text"] == "v0.22.0" for a in dapo["adopted"])  # its release note
    # TRL's "Add SAPO Loss" (2025-12-03) is Qwen's SAPO, a paper the snapshot lacks; the stored SAPOs are four
    # unrelated papers in the RL area, none holding most of the name's papers: a reused acronym, left unmatched
    sapo = run_cli(capsys, "-w", str(ws.root), "methods", "--name", "SAPO", "--json").json()
    assert sapo["adopted"] == []
    text = run_cli(capsys, "-w", str(ws.root), "methods", "--name", "DAPO").out
    assert "adopted by TRL (2025-08-22" in text


def test_a_second_crawl_is_conditional_and_a_second_framework_adds_its_own(
    crawled: tuple[Workspace, dict[str, object]], feeds: FeedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    ws, _ = crawled
    again = run_cli(capsys, "-w", str(ws.root), "crawl", "--source", "trl", "--json").json()["sources"][0]
    assert again["not_modified"] and again["added"] == 0
    assert feeds.hits(f"{TRL}/commits/main.atom")[-1].headers.get("if-none-match")
    verl = run_cli(capsys, "-w", str(ws.root), "crawl", "--source", "verl", "--json").json()["sources"][0]
    assert verl["ok"] and verl["added"] == 154
    # verl's "[algo] SAPO algo by Qwen (#4345)" is the same unknown SAPO: still no card takes it
    assert run_cli(capsys, "-w", str(ws.root), "methods", "--name", "SAPO", "--json").json()["adopted"] == []


def test_sense_rules_on_entries_the_recordings_do_not_hold(crawled: tuple[Workspace, dict[str, object]]) -> None:
    """Constructed entries (the rules' edge cases) against the real cards of the workspace."""
    ws, _ = crawled

    def entry(title: str, area: str, day: str = "2025-09-01T00:00:00Z") -> FrameworkEntry:
        return FrameworkEntry("fw:x", "kv", "kvlib", area, "commit", day, "https://example.org/c/1", title, "")

    with ws.store() as store:
        matcher = Matcher(store, ["Dr. GRPO"])  # a preset's method, as the composition root passes them

        def names(title: str, area: str, day: str = "2025-09-01T00:00:00Z") -> set[str]:
            return {m.name for m in matcher.match(entry(title, area, day))}

        # the RL SPARK in a library of other LLM work (no SPARK of that area; an English word never matches outside
        # the framework's areas; in a KV-cache library the KV-cache SPARK of 2508.15212 would be the meaning)
        assert "SPARK" not in names("fix SPARK tests", "other-llm")
        assert "SPARK" not in names("spark: bump the version", "rl-post-training")  # a word, not spelled as the card
        assert "DAPO" not in names("DAPO: fix the paged KV layout", "hardware-systems")  # short, another area
        assert "DAPO" in names("Add the DAPO loss", "rl-post-training")
        assert "DAPO" not in names("Read args.dapo from the config", "rl-post-training")  # spelled as the card
        assert "Dr. GRPO" in names("Add the Dr_GRPO loss", "rl-post-training") | names("Dr GRPO", "rl-post-training")
        assert "DAPO" not in names("Add the DAPO loss", "rl-post-training", "2024-06-01T00:00:00Z")  # before it
        assert "GRPO" not in names("GRPOTrainer: faster generation", "rl-post-training")  # not a whole token
        by_id = matcher.match(entry("Port the sequence-level ratio of arXiv:2507.18071v2", "hardware-systems"))
        assert [(m.name, m.via, m.intro_id) for m in by_id] == [("GSPO", "arxiv-id", "2507.18071")]
    assert is_word("SPARK") and is_word("Eagle") and not is_word("DAPO") and not is_word("SAPO")


def test_a_commit_feed_of_10000_entries_keeps_the_newest_up_to_the_cap(
    tmp_path: Path, feeds: FeedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    entries = "".join(
        f"<entry><id>tag:github.com,2008:Grit::Commit/{i:040x}</id>"
        f'<link rel="alternate" href="https://github.com/big/repo/commit/{i:040x}"/>'
        f"<title>Commit {i}</title><updated>2025-{1 + i % 12:02d}-{1 + i % 28:02d}T00:00:00Z</updated></entry>"
        for i in range(10_000)
    )
    feeds.static("/big/repo/commits/main.atom", f'<feed xmlns="http://www.w3.org/2005/Atom">{entries}</feed>'.encode())
    feeds.static("/big/repo/releases.atom", b'<feed xmlns="http://www.w3.org/2005/Atom"><title>r</title></feed>')
    config = FAST_CRAWL.replace("[crawl]\n", "[crawl]\nmax_feed_entries = 500\n") + _source(f"{feeds.url}/big/repo")
    ws, _ = Workspace.init(tmp_path / "ws", config_text=config)
    res = run_cli(capsys, "-w", str(ws.root), "crawl", "--json")
    assert res.code == 0, res.err
    (src,) = res.json()["sources"]
    assert src["added"] == 500 and "9,500 entries left ([crawl] max_feed_entries = 500" in src["message"]
    with ws.store() as store:
        stored = sorted(e.published for e in FrameworkEntries(store).framework_entries())
    parsed = sorted(f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}T00:00:00Z" for i in range(1000))  # twice the cap
    assert stored == parsed[-500:]


def test_since_keeps_a_frameworks_entries_from_that_day_on_as_it_does_a_feeds(
    tmp_path: Path, feeds: FeedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """`radar crawl --since` bounds a framework's commits and releases as it bounds a feed's posts (one rule for
    both: crawler.run._newest); under the cap, nothing is left."""
    days = [f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}T00:00:00Z" for i in range(60)]
    entries = "".join(
        f"<entry><id>tag:github.com,2008:Grit::Commit/{i:040x}</id>"
        f'<link rel="alternate" href="https://github.com/since/repo/commit/{i:040x}"/>'
        f"<title>Commit {i}</title><updated>{day}</updated></entry>"
        for i, day in enumerate(days)
    )
    feeds.static(
        "/since/repo/commits/main.atom", f'<feed xmlns="http://www.w3.org/2005/Atom">{entries}</feed>'.encode()
    )
    feeds.static("/since/repo/releases.atom", b'<feed xmlns="http://www.w3.org/2005/Atom"><title>r</title></feed>')
    ws, _ = Workspace.init(tmp_path / "ws", config_text=FAST_CRAWL + _source(f"{feeds.url}/since/repo"))
    res = run_cli(capsys, "-w", str(ws.root), "crawl", "--since", "2025-07-01", "--json")
    assert res.code == 0, res.err
    (src,) = res.json()["sources"]
    kept = sorted(d for d in days if d >= "2025-07-01")
    assert 0 < len(kept) < len(days) and src["added"] == len(kept) and "left" not in src["message"]
    with ws.store() as store:
        assert sorted(e.published for e in FrameworkEntries(store).framework_entries()) == kept


def test_a_hostile_release_note_is_stored_and_shown_as_plain_text(
    crawled: tuple[Workspace, dict[str, object]], feeds: FeedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    ws, _ = crawled
    note = (
        "&lt;h2&gt;DAPO &lt;script&gt;alert(1)&lt;/script&gt;&lt;/h2&gt;&lt;img src=x onerror=alert(2)&gt;"
        "&lt;a href=&quot;javascript:alert(3)&quot;&gt;the DAPO loss&lt;/a&gt; \x1b[31mred "
        "&lt;style&gt;p{}&lt;/style&gt;"
    )
    body = (
        '<feed xmlns="http://www.w3.org/2005/Atom"><title>r</title><entry><id>tag:x,2008:Repository/1/v9</id>'
        '<link rel="alternate" href="javascript:alert(4)"/><title>v9 &lt;b onmouseover=x&gt;DAPO&lt;/b&gt;</title>'
        f'<updated>2025-09-02T00:00:00Z</updated><content type="html">{note}</content></entry></feed>'
    ).encode()
    feeds.static("/evil/fw/releases.atom", body)
    feeds.static("/evil/fw/commits/main.atom", b'<feed xmlns="http://www.w3.org/2005/Atom"><title>c</title></feed>')
    (ws.root / "radar.toml").write_text(
        (ws.root / "radar.toml").read_text() + _source(feeds.url + "/evil/fw", "evil", label="Evil")
    )
    res = run_cli(capsys, "-w", str(ws.root), "crawl", "--source", "evil", "--json")
    assert res.code == 0, res.err
    with ws.store() as store:
        (entry,) = FrameworkEntries(store).framework_entries("evil")
    for shown in (entry.title, entry.text):
        assert "<" not in shown and "alert(1)" not in shown and "onerror" not in shown and "p{}" not in shown
    assert entry.link == "" and "DAPO" in entry.title
    card = run_cli(capsys, "-w", str(ws.root), "methods", "--name", "DAPO", "--json").json()
    evil = [a for a in card["adopted"] if a["framework"] == "Evil"]
    assert evil and evil[0]["link"] == "" and "<" not in evil[0]["text"]
    text = run_cli(capsys, "-w", str(ws.root), "methods", "--name", "DAPO").out
    assert "\x1b" not in text and "<b" not in text


def test_a_framework_feed_redirecting_to_an_internal_host_is_refused_and_nothing_is_stored(
    tmp_path: Path, feeds: FeedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    canary = Canary()
    try:
        feeds.routes["/moved/fw/commits/main.atom"] = lambda req: Reply(302, b"", {"Location": canary.url + "/x"})
        feeds.static("/moved/fw/releases.atom", _feed("trl_releases"))
        ws = make_workspace(tmp_path / "ws", _source(feeds.url + "/moved/fw", "moved"))
        res = run_cli(capsys, "-w", str(ws.root), "crawl", "--json")
        assert res.code == 2
        (src,) = res.json()["sources"]
        assert not src["ok"] and "commits feed" in src["message"] and "127.0.0.2" in src["message"]
        assert canary.hits == []  # never requested
        with ws.store() as store:
            kinds = {e.kind for e in FrameworkEntries(store).framework_entries()}
        assert kinds == {"release"}  # the other feed's entries are stored, none from the redirect
    finally:
        canary.close()


@pytest.mark.parametrize(
    ("table", "fix"),
    [
        ('type = "framework"\narea = "rl-post-training"', 'url = "https://github.com/OWNER/REPO"'),
        ('type = "framework"\nurl = "https://github.com/a/b"', "area must be one of"),
        ('type = "framework"\nurl = "https://github.com/a/b"\narea = "rl"', "area must be one of"),
        ('type = "framework"\nurl = "https://github.com/a/b"\narea = "hardware-systems"\nforge = "svn"', "forge"),
        ('type = "framework"\nurl = "https://github.com/a/b"\narea = "hardware-systems"\nbranch = "a b"', "branch"),
    ],
)
def test_framework_source_errors_name_the_fix(table: str, fix: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(fix)) as err:
        crawler_config(parse_config(f'[[sources]]\nname = "x"\n{table}\n'))
    assert "\n" not in str(err.value)


def test_framework_feeds_follow_the_forge() -> None:
    gh = FrameworkSource(name="trl", url="https://github.com/huggingface/trl/", area="rl-post-training")
    assert gh.framework_feeds() == (
        ("release", "https://github.com/huggingface/trl/releases.atom"),
        ("commit", "https://github.com/huggingface/trl/commits/main.atom"),
    )
    gl = FrameworkSource(name="x", url="https://gitlab.com/g/p.git", area="hardware-systems", branch="dev")
    assert gl.framework_feeds()[1] == ("commit", "https://gitlab.com/g/p/-/commits/dev?format=atom")
    assert gh.framework == "trl" and FrameworkSource(name="t", url=gh.url, area=gh.area, label="TRL").framework == "TRL"


# -- recommendations ----------------------------------------------------------------------------------------
def _run(overall: str, cls: str = "evidence") -> RunSummary:
    return RunSummary(
        "r1", "dapo", "grpo", "gsm8k", "tiny", cls, overall, overall, False, "", "", "", None, None, "", ""
    )


TRL_DAPO = {"framework": "TRL", "date": "2025-08-22", "link": DAPO_COMMIT}
IN_TRL = {"adopted": [TRL_DAPO], "profile_frameworks": ["TRL"]}


@pytest.mark.parametrize(
    ("fields", "action", "rule"),
    [
        ({"adopted": [TRL_DAPO], "profile_frameworks": ["trl"], "chosen": True}, "adopt", "framework-adopt"),
        (
            {"adopted": [TRL_DAPO], "profile_frameworks": ["TRL"], "run": _run("no clear difference")},
            "adopt",
            "framework-adopt",
        ),
        (
            {"adopted": [TRL_DAPO], "profile_frameworks": ["TRL"], "run": _run("no clear difference", "underpowered")},
            "watch",
            "in-use",
        ),
        ({"adopted": [TRL_DAPO], "profile_frameworks": [], "chosen": True}, "watch", "in-use"),
        (
            {"adopted": [TRL_DAPO], "profile_frameworks": ["TRL"], "chosen": True, "run": _run("worse")},
            "watch",
            "repro-worse",
        ),
        ({"adopted": [TRL_DAPO], "first_adopted_this_period": True}, "evaluate", "framework-first"),
    ],
)
def test_framework_rules(fields: dict[str, object], action: str, rule: str) -> None:
    rec = decide(Evidence(method="DAPO", origin="adoption", recent_count=1, **fields))  # type: ignore[arg-type]
    assert (rec.action, rec.rule) == (action, rule), rec.reason
    if rule.startswith("framework"):
        assert "TRL (2025-08-22, " + DAPO_COMMIT + ")" in rec.reason


def test_the_commented_defaults_name_the_labs_frameworks_and_each_parses() -> None:
    from radar.store.config import DEFAULT_CONFIG_TEXT

    block = DEFAULT_CONFIG_TEXT[DEFAULT_CONFIG_TEXT.index("# The frameworks the lab runs") :]
    tables = [
        "[[sources]]\n" + "\n".join(line.removeprefix("# ") for line in chunk.strip().splitlines())
        for chunk in block.split("# [[sources]]\n")[1:]
    ]
    sources = crawler_config(parse_config("\n".join(tables))).sources
    assert [s.framework for s in sources] == [
        "TRL", "verl", "OpenRLHF", "vLLM", "SGLang", "Megatron-LM", "DeepSpeed", "PEFT", "FlashInfer",
        "flash-attention", "TransformerEngine",
    ]  # fmt: skip
    assert all(s.type == "framework" and s.url.startswith("https://github.com/") for s in sources)
    assert {s.name: s.area for s in sources}["peft"] == "training-efficiency"
    assert not [
        s for s in crawler_config(parse_config(DEFAULT_CONFIG_TEXT)).sources if s.type == "framework"
    ]  # commented out


def test_the_methods_page_filters_the_cards_a_framework_adopted(
    crawled: tuple[Workspace, dict[str, object]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.testing.v1 import AppTest

    from radar.app.dashboard import data
    from tests.test_dashboard import MAIN_SCRIPT

    ws, _ = crawled
    monkeypatch.setenv("RADAR_HOME", str(ws.root))
    at = AppTest.from_file(str(MAIN_SCRIPT), default_timeout=180).run()
    at.session_state["radar_week"] = "2025-W30"  # GSPO's paper (2507.18071, 2025-07-24)
    at.switch_page("page_methods.py").run()
    assert not at.exception, [e.value for e in at.exception]
    every = next(d.value for d in at.dataframe if "method" in d.value.columns)
    at.checkbox(key="methods_adopted").check().run()
    adopted = next(d.value for d in at.dataframe if "method" in d.value.columns)
    assert "GSPO" in list(adopted["method"]) and all("TRL" in v for v in adopted["adopted by"])
    assert len(adopted) == sum(v != "-" for v in every["adopted by"])  # the filter keeps exactly the adopted
    picked = list(adopted["method"]).index("GSPO")
    at.selectbox(key="methods_card").set_value(picked).run()
    joined = "\n".join(m.value for m in at.markdown)
    assert (
        "**Adopted by:** [" + data.text("TRL (2025-07-27)") + "](https://github.com/huggingface/trl/commit/" in joined
    )


def test_a_report_after_the_adoption_says_adopt_with_the_framework_date_and_link(
    crawled: tuple[Workspace, dict[str, object]], capsys: pytest.CaptureFixture[str]
) -> None:
    """TRL took GSPO in on 2025-07-27; a paper of 2025-W34 names GSPO. With TRL in the profile's frameworks and GSPO
    the lab's choice, that week's report says "adopt" by framework-adopt and names TRL's commit; without the
    choice (and no reproduction) it does not."""
    ws, _ = crawled
    config = ws.root / "radar.toml"
    original = config.read_text()

    def gspo() -> dict[str, object]:
        res = run_cli(capsys, "-w", str(ws.root), "report", "--week", "2025-W34", "--format", "md", "--json")
        assert res.code == 0, res.err
        report = orjson.loads((ws.root / "reports" / "2025-W34" / "report.json").read_bytes())
        return next(r for r in report["recommendations"] if r["method"] == "GSPO")

    try:
        config.write_text(original + '\n[profile]\nframeworks = ["TRL"]\nchosen = ["GSPO"]\n')
        chosen = gspo()
        assert (chosen["action"], chosen["rule"]) == ("adopt", "framework-adopt")
        link = "https://github.com/huggingface/trl/commit/03034317d0be0c259c315f5ffad71be138c17d2c"
        assert f"TRL (2025-07-27, {link})" in str(chosen["reason"]) and "chose" in str(chosen["reason"])
        config.write_text(original + '\n[profile]\nframeworks = ["TRL"]\n')
        assert gspo()["action"] != "adopt"
    finally:
        config.write_text(original)
