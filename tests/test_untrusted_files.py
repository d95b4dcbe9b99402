"""Untrusted text and workspace files (issue 26): no code runs from a file, no bidi or zero-width character
reaches a report, a mail, the webhook or a page, a digest's Markdown is escaped like the report's, deep JSON is
one line, dropped tables come back, a flooded feed and a flooded weekly embed are capped. Each test failed on the
code before the fix (the probe it reproduces is named in its docstring)."""

from __future__ import annotations

import ast
import gzip
import json
import re
import sqlite3
from pathlib import Path

import orjson
import pytest

from radar.crawler.documents import Documents
from radar.crawler.snapshot import import_snapshot
from radar.index.tags_table import Tags
from radar.reports.people.repository import People
from radar.store import Workspace
from tests.cli_helpers import run_cli
from tests.conftest import FAST_CRAWL, ROOT, make_workspace
from tests.feedserver import FeedServer
from tests.report_servers import SmtpSink, WebhookSink
from tests.test_report_content import WEEK, tag_rows

INVISIBLE = re.compile("[\u202a-\u202e\u2066-\u2069\u200b-\u200d\u2060\ufeff]")  # as the issue lists them
RLO_TITLE = (
    "Invoice\u202egpj.exe: \u2066GR\u200bPO\u2069 with \u200dzero\u2060width\ufeff and \u202aembedded\u202c text"
)
CLEAN_TITLE = "Invoicegpj.exe: GRPO with zerowidth and embedded text"


def _one_line(text: str) -> bool:
    return len([line for line in text.splitlines() if line.strip()]) == 1


def _papers(path: Path, rows: list[dict[str, object]]) -> Path:
    with gzip.open(path, "wb") as fh:
        fh.writelines(orjson.dumps(r) + b"\n" for r in rows)
    return path


def _rss(items: list[tuple[str, str]]) -> bytes:
    body = "".join(
        f"<item><title>{t}</title><link>https://blog.example/{i}</link><description>{d}</description>"
        f"<pubDate>Wed, 14 Feb 2024 09:00:00 GMT</pubDate></item>"
        for i, (t, d) in enumerate(items)
    )
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>b</title>{body}</channel></rss>'.encode()


# -- code from a file ---------------------------------------------------------------------------------------------
UNSAFE_MODULES = {"pickle", "cPickle", "dill", "cloudpickle", "joblib", "shelve", "marshal"}


def test_no_workspace_file_is_loaded_by_a_loader_that_runs_code() -> None:
    """Every load of workspace files: no pickle-family module is imported, every ``np.load`` passes
    ``allow_pickle=False``, every ``torch.load`` passes ``weights_only=True``, no ``trust_remote_code=True``."""
    problems = []
    for folder in ("store", "crawler", "index", "analysis", "reports", "repro", "app"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT)
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                    problems += [f"{rel}:{node.lineno} imports {n}" for n in names if n.split(".")[0] in UNSAFE_MODULES]
                if not isinstance(node, ast.Call):
                    continue
                name = ast.unparse(node.func)
                kwargs = {k.arg: ast.unparse(k.value) for k in node.keywords}
                if name.endswith("np.load") and kwargs.get("allow_pickle") != "False":
                    problems.append(f"{rel}:{node.lineno} np.load without allow_pickle=False")
                if name.endswith("torch.load") and kwargs.get("weights_only") != "True":
                    problems.append(f"{rel}:{node.lineno} torch.load without weights_only=True")
                if kwargs.get("trust_remote_code") == "True":
                    problems.append(f"{rel}:{node.lineno} trust_remote_code=True")
    assert not problems, problems


# -- bidi and zero-width characters --------------------------------------------------------------------------------
def test_no_bidi_or_zero_width_character_reaches_a_report_a_mail_the_webhook_or_a_page(
    small_snapshot: Path, server: FeedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Probe: RLO, zero-width and bidi-isolate characters in titles reached report.md/html, both mail parts, the
    webhook and the dashboard unchanged (an RLO title displayed "Report.xls"). Removed at ingest (import, feeds);
    feed text in HTML sits in <bdi>."""
    from radar.app.dashboard.data import md

    server.static("/feed.xml", _rss([(RLO_TITLE.replace("Invoice", "Post"), "A\u202e body \u200bof text.")]))
    paper = {
        "id": "2402.99001",
        "title": RLO_TITLE,
        "abstract": "Reinforcement learning with GRPO\u202e and \u2067policy\u2069 optimization. Second sentence.",
        "authors": ["Eve \u202eNoslen"],
        "categories": ["cs.LG"],
        "primary_category": "cs.LG",
        "published": "2024-02-14",
    }
    with SmtpSink() as smtp, WebhookSink() as hook:
        toml = (
            f'[[sources]]\nname = "blog"\ntype = "feed"\nurl = "{server.url}/feed.xml"\n'
            f'[delivery.email]\nhost = "127.0.0.1"\nport = {smtp.port}\ntls = "none"\nfrom = "r@lab.example"\n'
            f'to = ["a@lab.example"]\ntimeout_s = 5\n[delivery.webhook]\nurl = "{hook.url}"\n'
        )
        ws = make_workspace(tmp_path / "ws", toml)
        with ws.store() as store:
            import_snapshot(store, small_snapshot)
            import_snapshot(store, _papers(tmp_path / "evil.jsonl.gz", [paper]))
        assert run_cli(capsys, "--workspace", str(ws.root), "crawl").code == 0
        tag_rows(ws)
        with ws.store() as store:
            doc = Documents(store).get("2402.99001")
            assert doc is not None and doc.title == CLEAN_TITLE and doc.authors == ("Eve Noslen",)
            titles = [d.title for d in Documents(store).scan() if d.id == "2402.99001" or d.kind == "post"]
        res = run_cli(capsys, "--workspace", str(ws.root), "report", "--week", WEEK, "--send", "--json")
        assert res.code == 0, res.err
        mail = smtp.messages[0][1]
        parts = [p.get_content() for p in mail.walk() if p.get_content_type() in ("text/plain", "text/html")]
        payload = json.dumps(hook.posts[0], ensure_ascii=False)
    folder = ws.report_dir(WEEK)
    files = {p.name: p.read_text(encoding="utf-8") for p in folder.glob("report.*")}
    post = CLEAN_TITLE.replace("Invoice", "Post")  # every post of the week is listed
    assert post in files["report.json"] and len(parts) == 2
    seen = {**files, "mail text": parts[0], "mail html": parts[1], "webhook": payload, "page": md(RLO_TITLE)}
    seen |= {"titles": "".join(titles)}
    dirty = [name for name, text in seen.items() if INVISIBLE.search(text)]
    assert not dirty, dirty
    assert f"<bdi>{post}</bdi>" in files["report.html"] and f"<bdi>{post}</bdi>" in parts[1]


def test_rows_stored_before_the_fix_are_cleaned_by_the_migration(tmp_path: Path) -> None:
    """A workspace written by an older radar keeps its RLO titles until it is opened by this one."""
    from radar.store.schema import MIGRATIONS

    STRIP_MIGRATION = next(v for v, sql in MIGRATIONS if "radar_strip_invisible" in sql)  # noqa: N806
    ws, _ = Workspace.init(tmp_path / "ws")
    with ws.store() as store:
        import_snapshot(
            store, _papers(tmp_path / "p.jsonl.gz", [{"id": "2402.99002", "title": "T", "published": "2024-02-14"}])
        )
    conn = sqlite3.connect(ws.db_path)
    conn.execute("UPDATE documents SET title = ?, authors = ? WHERE id = '2402.99002'", (RLO_TITLE, '["A\u202eB"]'))
    conn.execute("INSERT INTO people (name, profile, created_at) VALUES ('p', ?, '')", ('{"terms": {"G\u200bR": 1}}',))
    conn.execute(f"PRAGMA user_version = {STRIP_MIGRATION - 1}")  # as the version before the clean-up left it
    conn.commit()
    conn.close()
    with ws.store() as store:
        doc = Documents(store).get("2402.99002")
        person = People(store).person("p")
    assert doc is not None and doc.title == CLEAN_TITLE and doc.authors == ("AB",)
    assert person.profile.terms == {"GR": 1.0}


def test_people_profiles_and_saved_searches_lose_invisible_characters(workspace: Workspace) -> None:
    from radar.reports.people.repository import PersonProfile

    with workspace.store() as store:
        People(store).add_person("kim")
        People(store).update_person("kim", profile=PersonProfile(terms={"GR\u200bPO": 2.0}, authors=("\u202eEve",)))
        People(store).save_search("kim", "s\u2066x", "policy\u200b gradient")
        person, search = People(store).person("kim"), People(store).saved_searches("kim")[0]
    assert person.profile.terms == {"GRPO": 2.0} and person.profile.authors == ("Eve",)
    assert (search.name, search.query) == ("sx", "policy gradient")


# -- a digest's Markdown ---------------------------------------------------------------------------------------------
def test_digest_markdown_escapes_feed_text_like_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Probe: digest-NAME.md held a title's <script> unescaped (report.md escapes it)."""
    from radar.app import steps_people
    from radar.app.context import Radar
    from radar.reports.period import parse_week
    from radar.reports.render import md_escape

    evil = "<script>alert(1)</script> [click](javascript:x) **bold** GRPO policy optimization"
    rows = [
        {
            "id": f"2402.9910{i}",
            "title": f"{evil} {i}",
            "abstract": "GRPO policy optimization for reasoning.",
            "published": "2024-02-14",
            "categories": ["cs.LG"],
        }
        for i in range(3)
    ]
    ws, _ = Workspace.init(tmp_path / "ws")
    with ws.store() as store:
        import_snapshot(store, _papers(tmp_path / "e.jsonl.gz", rows))
    assert run_cli(capsys, "--workspace", str(ws.root), "people", "add", "lee").code == 0
    assert run_cli(capsys, "--workspace", str(ws.root), "people", "set", "lee", "--term", "GRPO").code == 0
    (done,) = steps_people.digests(Radar.at(ws.root), parse_week(WEEK), send=False)
    text = done.paths["md"].read_text(encoding="utf-8")
    assert done.digest.papers and "<script" not in text and "[click](javascript" not in text
    assert md_escape(f"{evil} 0") in text


# -- deep JSON -------------------------------------------------------------------------------------------------------
def test_a_csl_library_nested_200000_deep_is_one_line(
    workspace: Workspace, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Probe: CSL JSON nested 200,000 deep raised RecursionError."""
    lib = tmp_path / "deep.json"
    lib.write_text("[" * 200_000 + "]" * 200_000)
    assert run_cli(capsys, "--workspace", str(workspace.root), "people", "add", "mo").code == 0
    res = run_cli(capsys, "--workspace", str(workspace.root), "people", "import", "mo", str(lib))
    assert res.code == 1 and "nested 200,000 levels deep" in res.err and _one_line(res.err), res
    assert "Traceback" not in res.err


def test_a_deep_or_foreign_report_json_is_no_report(tmp_path: Path) -> None:
    from radar.reports.build import load_report

    folder = tmp_path / "2024-W07"
    folder.mkdir()
    for text in ("[" * 100_000 + "]" * 100_000, '{"title": 1}', "[1, 2]"):
        (folder / "report.json").write_text(text)
        assert load_report(folder) is None


# -- dropped tables --------------------------------------------------------------------------------------------------
def test_dropped_tables_are_recreated_and_methods_tag_and_report_still_work(
    small_snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Probe: a database with the names and tag_state tables dropped gave tracebacks in methods, tag and report."""
    ws, _ = Workspace.init(tmp_path / "ws")
    with ws.store() as store:
        import_snapshot(store, small_snapshot)
    tag_rows(ws)
    conn = sqlite3.connect(ws.db_path)
    conn.execute("DROP TABLE names")
    conn.execute("DROP TABLE tag_state")
    conn.commit()
    conn.close()
    for argv in (["methods", "--json"], ["report", "--week", WEEK, "--json"]):
        res = run_cli(capsys, "--workspace", str(ws.root), *argv)
        assert res.code == 0 and "Traceback" not in res.err, (argv, res.err)
    with ws.store() as store:
        assert list(Tags(store).candidates("m", "t")) == []  # what `radar tag` reads first
        indexes = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"names_kind", "tag_state_tagger"} <= indexes
    conn = sqlite3.connect(ws.db_path)
    conn.execute("DROP TABLE people")
    conn.commit()
    conn.close()
    with ws.store() as store:
        assert store.recreated == ["people"] and People(store).people() == []


# -- bounds ------------------------------------------------------------------------------------------------------------
def test_a_flooded_feed_stores_its_newest_entries_up_to_the_cap(
    server: FeedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Probe: one feed with 100,000 entries was stored whole (82 s, 470 MB). Here 300 entries, a cap of 120."""
    from radar.crawler.config import CrawlConfig

    items = "".join(
        f"<item><title>Post {i}</title><link>https://blog.example/{i}</link>"
        f"<pubDate>{(1 + i % 28):02d} Jan 2024 {i % 24:02d}:00:00 GMT</pubDate></item>"
        for i in range(300)
    )
    server.static("/big.xml", f'<rss version="2.0"><channel><title>b</title>{items}</channel></rss>'.encode())
    source = f'[[sources]]\nname = "big"\ntype = "feed"\nurl = "{server.url}/big.xml"\n'
    ws, _ = Workspace.init(
        tmp_path / "ws", FAST_CRAWL.replace("[crawl]\n", "[crawl]\nmax_feed_entries = 120\n") + source
    )
    res = run_cli(capsys, "--workspace", str(ws.root), "crawl", "--json")
    assert res.code == 0, res.err
    (src,) = res.json()["sources"]
    assert src["added"] == 120 and "180 entries left ([crawl] max_feed_entries = 120" in src["message"]
    with ws.store() as store:
        stored = sorted(d.published for d in Documents(store).scan())
    # the first 240 entries are parsed (twice the cap: a feed lists its newest first, mostly), the newest 120 kept
    newest = sorted(f"2024-01-{1 + i % 28:02d}T{i % 24:02d}:00:00Z" for i in range(240))[-120:]
    assert stored == newest
    assert CrawlConfig().max_feed_entries == 2000


def test_a_long_feed_is_cut_before_it_is_parsed_keeping_its_closing_tags() -> None:
    from radar.crawler.feeds import first_entries, parse_feed

    atom = (
        b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>'
        + b"".join(
            f"<entry><title>E{i}</title><link href='https://b.example/{i}'/><id>u{i}</id>"
            f"<updated>2024-01-0{1 + i % 9}T00:00:00Z</updated></entry >".encode()
            for i in range(50)
        )
        + b"</feed>"
    )
    body, cut = first_entries(atom, 10)
    assert cut == 40 and body.endswith(b"</feed>") and b"E9<" in body and b"E10<" not in body
    parsed = parse_feed(atom, url="https://b.example/feed", source="b", max_entries=5)
    assert len(parsed.documents) == 10 and parsed.extra == {"cut": 40} and not parsed.warning
    assert first_entries(atom, 50) == (atom, 0)


def test_one_weekly_run_embeds_at_most_its_cap_and_the_next_run_the_rest(tmp_path: Path, small_snapshot: Path) -> None:
    """Probe: the weekly after a flood would embed all of it (about 2 hours for 100,000). The newest are embedded
    first; the rest stay pending for the next run."""
    from radar.app import steps
    from radar.app.context import Radar
    from radar.index.config import EmbeddingConfig

    assert EmbeddingConfig().weekly_max_documents == 20_000
    ws, _ = Workspace.init(tmp_path / "ws")
    with gzip.open(small_snapshot, "rb") as fh:
        lines = fh.readlines()[:25]
    snap = tmp_path / "s.jsonl.gz"
    with gzip.open(snap, "wb") as fh:
        fh.writelines(lines)
    with ws.store() as store:
        import_snapshot(store, snap)
        newest = [d.id for d in Documents(store).scan()][-10:]
    radar = Radar(ws)
    first = steps.index(radar, limit=10, prebuilt=())
    assert (first.report.embedded, first.left) == (10, 15)
    with ws.store() as store:
        embedded = {r[0] for r in store.conn.execute("SELECT doc_id FROM embeddings")}
    assert embedded == set(newest)
    second = steps.index(radar, limit=10, prebuilt=())
    third = steps.index(radar, limit=10, prebuilt=())
    assert (second.report.embedded, second.left, third.report.embedded, third.left) == (10, 5, 5, 0)
