"""The Streamlit dashboard, page by page, through streamlit.testing.v1.AppTest on a real small
workspace (real papers, the real packaged model, real FAISS/BM25): numbers match the store, a
search finds the paper it means, a tag fix writes a correction, a run starts from the form, feed
text never comes out as markup."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import socket
import sqlite3
import time
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from radar.analysis.contributions.table import Contributions
from radar.app.cli import main
from radar.app.dashboard import MAIN_SCRIPT, data
from radar.app.dashboard.page_reports import sandboxed
from radar.crawler.documents import Document, Documents
from radar.crawler.state import CrawlState, CrawlStates
from radar.repro.runs_table import Runs
from radar.store import Workspace
from radar.store.models import utc_now
from tests.cli_helpers import run_cli
from tests.index_helpers import dev_queries, write_subset

EVIL_TITLE = "<script>alert(1)</script> <img src=x onerror=alert(1)> [click](javascript:alert(1)) $x$ :red[r]"
EVIL_ABSTRACT = "**bold** <b>html</b> <iframe src=javascript:alert(2)></iframe> ![img](http://x/y.png) # head"
EVIL_ID = "post:0123456789abcdef"
TAGGED = ("rl-policy-optimization", "llm-reasoning")


def _evil_doc(published: str) -> Document:
    return Document(
        id=EVIL_ID,
        kind="post",
        source="evil-feed",
        title=EVIL_TITLE,
        abstract=EVIL_ABSTRACT,
        published=published,
        url="javascript:alert(3)",
        authors=("<b>Mallory</b>",),
    )


@pytest.fixture(scope="module")
def dash_ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """~70 real papers (the dev-query targets among them), indexed; one hostile post; tags; a crawl error."""
    root = tmp_path_factory.mktemp("dash") / "ws"
    subset = root.parent / "subset.jsonl.gz"
    write_subset(subset, 60)
    assert main(["--workspace", str(root), "init"]) == 0
    assert main(["--workspace", str(root), "import", str(subset)]) == 0
    ws = Workspace.open(root)
    with ws.store() as store:
        last = Documents(store).published_range().last
        Documents(store).upsert([_evil_doc(last)])
        target = dev_queries()[0]["id"]
        with store.transaction() as conn:
            conn.executemany(
                "INSERT INTO document_tags (doc_id, tag, score, origin, created_at) VALUES (?, ?, ?, ?, ?)",
                [(target, tag, 0.9, "model", utc_now()) for tag in TAGGED],
            )
        source = ws.config().source_tables[0]["name"]
        CrawlStates(store).save(
            CrawlState(
                source=source,
                last_attempt="2026-07-02T10:00:00Z",
                last_error="HTTP 503 from export.arxiv.org after 4 retries",
                last_error_at="2026-07-02T10:00:00Z",
            )
        )
    assert main(["--workspace", str(root), "index"]) == 0
    return ws


@pytest.fixture
def app(dash_ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> Iterator[AppTest]:
    monkeypatch.setenv("RADAR_HOME", str(dash_ws.root))
    at = AppTest.from_file(str(MAIN_SCRIPT), default_timeout=180)
    at.run()
    yield at


def _page(at: AppTest, name: str) -> AppTest:
    at.switch_page(f"page_{name}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def _markdown(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown] + [c.value for c in at.caption]


def _count(ws: Workspace, sql: str, *params: object) -> int:
    conn = sqlite3.connect(ws.db_path)
    try:
        return int(conn.execute(sql, params).fetchone()[0])
    finally:
        conn.close()


# -- overview -----------------------------------------------------------------------------------------
def test_overview_opens_on_the_latest_complete_week_and_reads_its_trends(app: AppTest, dash_ws: Workspace) -> None:
    """No report yet: the latest week the papers cover completely; its counts are the store's (the day each
    document entered the record); trends are not computed on open: a button computes and keeps them."""
    from radar.app.dashboard import period
    from radar.reports.period import latest_data_week, parse_week

    assert not app.exception, [e.value for e in app.exception]
    assert app.title[0].value == "Overview"
    with dash_ws.store() as store:
        total = Documents(store).count()
        week = latest_data_week(store)
        docs = Documents(store).matching(since=week.since, until=week.until)
        kinds = Documents(store).counts_by_kind(week.since, week.until)
    assert app.session_state[period.KEY] == week.label
    assert app.selectbox(key=period.WIDGET).value == week.label
    assert _metric(app, "Documents") == f"{len(docs):,}"
    assert _metric(app, "Posts") == f"{kinds.get('post', 0):,}"
    assert _metric(app, "In the workspace") == f"{total:,}"
    assert not dash_ws.period_trends_path(week.label).exists()  # nothing computed on open
    assert any("no trends computed" in i.value for i in app.info)
    app.button(key=f"compute-trends-{week.label}").click().run()
    assert not app.exception, [e.value for e in app.exception]
    assert dash_ws.period_trends_path(week.label).is_file()
    assert app.get("vega_lite_chart"), "the charts are missing"
    # another week: every number moves with it
    earlier = parse_week(week.label).shifted(-8)
    app.selectbox(key=period.WIDGET).set_value(earlier.label).run()
    with dash_ws.store() as store:
        before = Documents(store).matching(since=earlier.since, until=earlier.until)
    assert _metric(app, "Documents") == f"{len(before):,}"
    app.selectbox(key=period.WIDGET).set_value(week.label).run()


def test_one_week_on_every_page_until_the_user_changes_it(app: AppTest, dash_ws: Workspace) -> None:
    from radar.app.dashboard import period

    chosen = app.selectbox(key=period.WIDGET).options[3]
    app.selectbox(key=period.WIDGET).set_value(chosen).run()
    for page in ("explore", "reports", "repro", "settings", "overview"):
        _page(app, page)
        assert app.selectbox(key=period.WIDGET).value == chosen, page
        assert app.session_state[period.KEY] == chosen


def test_dashboard_text_is_plain_and_our_code_is_code() -> None:
    shown = data.text(r"a \\textit{prosody} and {entropy collapse} at $O(n)$")
    assert shown == "a prosody and entropy collapse at O\\(n\\)"
    assert data.ours("run `radar repro run --method dapo` <b>now</b>") == (
        "run `radar repro run --method dapo` \\<b\\>now\\</b\\>"
    )


# -- explore ------------------------------------------------------------------------------------------
def test_search_finds_the_paper_a_query_means(app: AppTest) -> None:
    _page(app, "explore")
    found = 0
    for q in dev_queries()[:5]:
        app.text_input(key="ex_query").input(q["q"]).run()
        assert not app.exception
        keys = [b.key for b in app.button if (b.key or "").startswith("open-")]
        found += f"open-{q['id']}" in keys
    assert found >= 4, f"only {found}/5 known items in the top 10"


def test_filters_narrow_the_list(app: AppTest, dash_ws: Workspace) -> None:
    from radar.app.dashboard import period
    from radar.reports.period import week_of

    with dash_ws.store() as store:
        newest = date.fromisoformat(Documents(store).published_range().last[:10])
    app.session_state[period.KEY] = week_of(newest).label  # the list without a query: the chosen week's documents
    _page(app, "explore")
    app.multiselect(key="ex_kinds").set_value(["post"]).run()
    keys = [b.key for b in app.button if (b.key or "").startswith("open-")]
    assert keys == [f"open-{EVIL_ID}"]


def test_detail_shows_abstract_similar_papers_and_tags(app: AppTest, dash_ws: Workspace) -> None:
    target = dev_queries()[0]
    _page(app, "explore")
    app.text_input(key="ex_query").input(target["q"]).run()
    app.button(key=f"open-{target['id']}").click().run()
    assert not app.exception
    with dash_ws.store() as store:
        doc = Documents(store).get(target["id"])
    assert doc is not None
    assert data.text(doc.abstract) in _markdown(app)  # through the report's LaTeX-to-text step
    assert any((b.key or "").startswith(f"sim-{target['id']}-") for b in app.button), "no similar papers"
    for tag in TAGGED:
        assert app.button(key=f"remove-{target['id']}-{tag}")


def test_tag_fix_buttons_write_corrections(app: AppTest, dash_ws: Workspace) -> None:
    target = dev_queries()[0]["id"]
    _page(app, "explore")
    app.session_state["ex_doc"] = target
    app.run()
    app.button(key=f"remove-{target}-{TAGGED[0]}").click().run()
    assert not app.exception, [e.value for e in app.exception]
    app.button(key=f"confirm-{target}-{TAGGED[1]}").click().run()
    app.selectbox(key=f"add-{target}").set_value("reward-modeling").run()
    app.button(key=f"add-btn-{target}").click().run()
    assert not app.exception, [e.value for e in app.exception]
    rows = dict(
        sqlite3.connect(dash_ws.db_path)
        .execute("SELECT tag, value FROM tag_corrections WHERE doc_id = ?", (target,))
        .fetchall()
    )
    assert rows == {TAGGED[0]: 0, TAGGED[1]: 1, "reward-modeling": 1}
    assert any("recorded" in s.value for s in app.success)


def test_feed_text_is_never_markup(app: AppTest, dash_ws: Workspace) -> None:
    """A hostile title/abstract shows as literal text: every special escaped, no HTML allowed."""
    from radar.app.dashboard import period
    from radar.reports.period import week_of

    with dash_ws.store() as store:
        newest = date.fromisoformat(Documents(store).published_range().last[:10])
    app.session_state[period.KEY] = week_of(newest).label  # the week of the hostile post
    _page(app, "explore")
    app.button(key=f"open-{EVIL_ID}").click().run()
    assert not app.exception
    texts = _markdown(app) + [h.value for h in app.subheader]
    joined = "\n".join(texts)
    assert data.text(data.one_line(EVIL_TITLE)) in joined and data.text(EVIL_ABSTRACT) in joined  # LaTeX as text
    hostile = [t for t in texts if "alert" in t or "Mallory" in t or "html" in t]
    assert len(hostile) >= 3  # title, byline, abstract
    for text in hostile:  # the page's own bold markers aside, every special character is escaped
        bare = text.removeprefix("**").removesuffix("**").replace("\\\\", "")
        assert not re.search(r"(?<!\\)[<>\[\]()*$:]", bare), text
    for el in list(app.markdown) + list(app.caption):
        assert not el.proto.allow_html
    # the javascript: URL is not offered as a link
    assert not [b for b in app.get("link_button") if "javascript" in b.proto.url]


# -- methods ------------------------------------------------------------------------------------------
def test_methods_page_lists_the_weeks_cards_lab_areas_first(app: AppTest, dash_ws: Workspace) -> None:
    """The week with the most introductions: the page's table is `radar methods --week`'s list, in its order."""
    from collections import Counter

    from radar.analysis.contributions.cards import iso_week
    from radar.analysis.contributions.week import week_cards
    from radar.app import steps_contributions
    from radar.app.context import Radar
    from radar.app.dashboard import period

    radar = Radar(dash_ws)
    with dash_ws.store() as store:
        steps_contributions.refresh(radar, store)
        busiest = Counter(iso_week(r.published) for r in Contributions(store).introductions()).most_common(1)[0][0]
        cards = week_cards(store, busiest, steps_contributions.presets(radar), steps_contributions.tag_groups(radar))
    assert cards
    app.session_state[period.KEY] = busiest
    _page(app, "methods")
    table = next(d.value for d in app.dataframe if "method" in d.value.columns)
    assert list(table["method"]) == [c.name for c in cards] and list(table["paper"]) == [c.introduced_by for c in cards]
    assert list(table["later papers"]) == [len(c.used_by) for c in cards]
    assert app.selectbox(key=period.WIDGET).value == busiest  # the one week picker
    detail = "\n".join(_markdown(app))
    first = cards[0]
    assert data.text(first.changes) in detail and data.md(first.introduced_by) in detail
    assert ("no preset" if not first.preset else data.md(first.preset)) in detail


def test_a_cards_detail_names_its_adopters_and_escapes_feed_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hostile paper introduces EVILPO; a later paper compares against it: the detail lists that paper's id as a
    later paper and as comparing, and every piece of feed text is escaped."""
    from radar.app import steps_contributions
    from radar.app.context import Radar
    from radar.app.dashboard import page_methods

    ws, _ = Workspace.init(tmp_path / "ws")
    intro = Document("2509.10003", "paper", "arxiv", "EVILPO: <script>alert(1)</script> [x](javascript:alert(2))",
                     "We propose EVILPO, a reinforcement learning method for LLMs that **bolds** <img src=x "
                     "onerror=alert(3)> and improves GRPO. Code: https://github.com/evil/evilpo).",
                     "2025-09-24T10:00:00Z", url="https://arxiv.org/abs/2509.10003")  # fmt: skip
    later = Document("2510.10001", "paper", "arxiv", "Stable reinforcement learning for reasoning",
                     "Our recipe outperforms EVILPO and GRPO on math benchmarks.", "2025-10-08T10:00:00Z")  # fmt: skip
    with ws.store() as store:
        Documents(store).upsert([intro, later])
        steps_contributions.refresh(Radar(ws), store)
    monkeypatch.setenv("RADAR_HOME", str(ws.root))
    at = AppTest.from_file(str(MAIN_SCRIPT), default_timeout=180).run()
    at.session_state["radar_week"] = "2025-W39"
    at.switch_page("page_methods.py").run()
    assert not at.exception, [e.value for e in at.exception]
    texts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [h.value for h in at.subheader]
    joined = "\n".join(texts)
    assert "**Later papers naming it:** 1\\: 2510\\.10001" in joined
    assert "**Of those, comparing against it:** 1\\: 2510\\.10001" in joined
    assert "(https://arxiv.org/abs/2509.10003)" in joined  # the paper's own link, http(s) only
    for text in texts:  # markup from the feed only ever escaped
        assert not re.search(r"(?<!\\)[<>]", text) and "](javascript" not in text, text
    for el in list(at.markdown) + list(at.caption):
        assert not el.proto.allow_html
    assert page_methods.week_cards(str(ws.root), data.version(str(ws.root)), "2025-W39")[0].name == "EVILPO"


def test_md_escapes_what_markdown_would_interpret() -> None:
    assert data.md("<b>x</b>") == r"\<b\>x\</b\>"
    assert data.md("[a](javascript:x)") == r"\[a\]\(javascript\:x\)"
    assert data.md("plain words 42") == "plain words 42"


# -- reports ------------------------------------------------------------------------------------------
def test_reports_page_lists_shows_and_offers_downloads(app: AppTest, dash_ws: Workspace) -> None:
    from radar.app.dashboard import period

    folder = dash_ws.report_dir("2026-W26")
    Workspace.write_text_atomic(folder / "report.md", "# Week 2026-W26\n\nNothing new.\n")
    Workspace.write_text_atomic(folder / "report.html", "<h1>Week 2026-W26</h1><script>alert(1)</script>")
    Workspace.write_text_atomic(dash_ws.report_dir("2026-W25") / "report.md", "# Week 2026-W25\n")
    app.session_state[period.KEY] = "2026-W26"
    _page(app, "reports")
    shown = set(app.selectbox(key=period.WIDGET).options)  # weeks with a report are marked in the picker
    assert {"2026-W26 · report", "2026-W25 · report"} <= shown
    assert {b.key for b in app.get("download_button")} >= {"dl-2026-W26-.md", "dl-2026-W26-.html"}
    frames = [el.proto.srcdoc for el in app.get("iframe")]
    shown = sandboxed("<h1>Week 2026-W26</h1><script>alert(1)</script>")
    assert frames == [shown]  # the chosen week, inside a sandboxed inner frame
    sandbox = re.search(r'<iframe sandbox="([^"]*)"', shown)
    assert sandbox and "allow-scripts" not in sandbox[1] and "allow-same-origin" not in sandbox[1]
    assert "<script>" not in shown and "&lt;script&gt;" in shown


def test_generate_now_writes_the_weeks_report(app: AppTest, dash_ws: Workspace) -> None:
    from radar.app.dashboard import period

    with dash_ws.store() as store:
        day = date.fromisoformat(Documents(store).published_range("paper").last[:10]) - timedelta(days=7)
    year, week, _ = day.isocalendar()
    label = f"{year}-W{week:02d}"
    _page(app, "reports")
    app.date_input(key="rp_day").set_value(day).run()
    app.button(key="rp_generate").click().run()
    assert not app.exception, [e.value for e in app.exception]
    assert (dash_ws.report_dir(label) / "report.html").is_file()
    assert any("wrote the" in s.value for s in app.success)
    assert app.session_state[period.KEY] == label  # the dashboard moves to the week it wrote
    assert [el.proto.srcdoc for el in app.get("iframe")][0].startswith('<iframe sandbox="allow-popups ')


def test_a_loopback_public_url_is_refused_at_config_time(
    dash_ws: Workspace, capsys: pytest.CaptureFixture[str]
) -> None:
    original = dash_ws.config_path.read_text()
    try:
        dash_ws.config_path.write_text(original + '\n[dashboard]\npublic_url = "http://127.0.0.1:8501"\n')
        res = run_cli(capsys, "--workspace", str(dash_ws.root), "search", "FP8 training")
    finally:
        dash_ws.config_path.write_text(original)
    assert res.code == 1
    assert "[dashboard] public_url 'http://127.0.0.1:8501' is a loopback address" in res.err
    assert len(res.err.strip().splitlines()) == 1


# -- repro --------------------------------------------------------------------------------------------
def _kill_run(ws: Workspace, run_id: str) -> None:
    row = sqlite3.connect(ws.db_path).execute("SELECT pid FROM runs WHERE id = ?", (run_id,)).fetchone()
    pid = row[0] if row else None
    if pid:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)  # the worker started its own session: its group is its pid


def test_repro_form_starts_a_run_and_cancel_stops_it(app: AppTest, dash_ws: Workspace) -> None:
    before = _count(dash_ws, "SELECT COUNT(*) FROM runs")
    _page(app, "repro")
    form = {w.label: w for w in [*app.selectbox, *app.number_input]}
    form["Method"].set_value("dapo")
    form["Task"].set_value("addition")
    form["Preset"].set_value("tiny")
    form["Seed pairs"].set_value(1)
    form["Steps (0 = preset default)"].set_value(2)
    form["Device"].set_value("cpu")
    next(b for b in app.button if b.label == "Start run").click().run()
    assert not app.exception, [e.value for e in app.exception]
    runs = sqlite3.connect(dash_ws.db_path).execute("SELECT id, params FROM runs ORDER BY created_at").fetchall()
    assert len(runs) == before + 1
    run_id, params = runs[-1][0], json.loads(runs[-1][1])
    try:
        assert params | {"method": "dapo", "baseline": "grpo", "seeds": 1, "steps": 2, "device": "cpu"} == params
        assert any(data.md(run_id) in s.value for s in app.success)
        app.run()
        app.button(key=f"cancel-{run_id}").click().run()
        state = (
            sqlite3.connect(dash_ws.db_path)
            .execute("SELECT status, cancel_requested FROM runs WHERE id = ?", (run_id,))
            .fetchone()
        )
        assert state[0] == "cancelled" or state[1] == 1
    finally:
        _kill_run(dash_ws, run_id)
    from radar.app import wiring
    from radar.app.context import Radar
    from radar.repro.spec import ACTIVE

    deadline = time.time() + 60
    api = wiring.reproductions(Radar(dash_ws))

    def status_of() -> str:
        return api.get(run_id).status

    while (status := status_of()) in ACTIVE and time.time() < deadline:
        time.sleep(0.5)  # get() reaps: a worker killed before it started is marked failed
    assert status in ("cancelled", "failed")


def test_repro_page_shows_a_finished_runs_verdict_and_curves(app: AppTest, dash_ws: Workspace) -> None:
    with dash_ws.store() as store:
        Runs(store).create_run(
            "20260101-000000-gspo-vs-grpo-abcd",
            "repro",
            {
                "method": "gspo",
                "baseline": "grpo",
                "task": "addition",
                "preset": "tiny",
                "seeds": 2,
                "steps": 3,
                "device": "cpu",
                "total_steps": 3,
            },
        )
        verdict = {
            "overall": "no clear difference",
            "summary": "gspo vs grpo over 2 seed(s): ... -> no clear difference.",
            "claim": {"claim": "clips far more", "status": "holds"},
            "mechanisms": {"method": {"clip_high": 0.01, "length": 12.0}, "baseline": {"clip_high": 0.002}},
        }
        Runs(store).update_run(
            "20260101-000000-gspo-vs-grpo-abcd",
            status="done",
            progress=1.0,
            finished_at=utc_now(),
            result={
                "verdict": verdict
                | {"efficiency": {"text": "8% slower per step (x1.08 from one seed pair: no spread)"}},
                "metrics": {"steps_per_s": 1.5},
                "plots": [],
                "profile": {  # the efficiency profile beside the verdict (repro/profile.py)
                    arm: {"device": "cpu", "step_s": step, "generate_s": 0.1, "peak_mem_gb": 0.6, "seeds": 2}
                    for arm, step in (("method", 0.54), ("baseline", 0.5))
                },
            },
        )
    metrics = dash_ws.run_dir("20260101-000000-gspo-vs-grpo-abcd") / "metrics"
    for arm in ("method", "baseline"):
        for seed in (0, 1):
            Workspace.write_text_atomic(
                metrics / f"{arm}-seed{seed}.jsonl",
                "".join(json.dumps({"step": s, "correct": 0.4 + 0.1 * s, "heldout": 0.5}) + "\n" for s in range(1, 4)),
            )
    _page(app, "repro")
    app.selectbox(key="rp_run").set_value("20260101-000000-gspo-vs-grpo-abcd").run()
    text = "\n".join(_markdown(app))
    assert "Verdict: no clear difference" in text and "holds" in text
    assert "3 steps, 2 seed pairs" in text  # the run's line names model, parameters, task, steps and seed pairs
    assert "**Efficiency**" in text and "slower per step" in text
    profile = next(df.value for df in app.dataframe if "step s" in df.value.columns)
    assert list(profile["step s"]) == [0.54, 0.5] and list(profile["arm"]) == ["gspo", "grpo (baseline)"]
    assert list(profile.columns) == ["arm", "step s", "generation s", "reward s", "reference s", "optimisation s"] + [
        "tokens/s",
        "peak GB",
        "device",
        "memory",
    ]
    mech = next(df.value for df in app.dataframe if "clip high" in df.value.columns)
    assert list(mech["arm"]) == ["gspo", "grpo (baseline)"] and list(mech["clip high"]) == [0.01, 0.002]
    assert list(mech.columns)[:4] == ["arm", "overlong punished", "clip low", "clip high"] and len(mech.columns) == 11
    assert app.get("vega_lite_chart"), "no curves"


# -- settings -----------------------------------------------------------------------------------------
def test_settings_shows_sources_crawl_errors_and_counts(app: AppTest, dash_ws: Workspace) -> None:
    _page(app, "settings")
    frames = [df.value for df in app.dataframe]
    sources = frames[0]
    assert list(sources["source"]) == [s["name"] for s in dash_ws.config().source_tables]
    first = sources.iloc[0]
    assert first["status"] == "failed" and "HTTP 503" in first["last error"]
    from radar.app.context import Radar

    assert list(frames[1]["tag"]) == [t.name for t in Radar(dash_ws).taxonomy.tags]
    assert _metric(app, "documents") == f"{_count(dash_ws, 'SELECT COUNT(*) FROM documents'):,}"
    assert any("crawl" in w.value for w in app.warning)


# -- the command ----------------------------------------------------------------------------------------
def test_app_command_validates_before_starting(capsys: pytest.CaptureFixture[str], dash_ws: Workspace) -> None:
    res = run_cli(capsys, "--workspace", str(dash_ws.root), "app", "--port", "70000")
    assert res.code == 1 and "port must be 1..65535" in res.err and "Traceback" not in res.err
    res = run_cli(capsys, "--workspace", str(dash_ws.root.parent / "nowhere"), "app")
    assert res.code == 1 and "init`" in res.err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        res = run_cli(capsys, "--workspace", str(dash_ws.root), "app", "--port", str(port))
    assert res.code == 1 and f"cannot listen on 127.0.0.1:{port}" in res.err and "another --port" in res.err


def test_streamlit_command_is_local_and_quiet(dash_ws: Workspace) -> None:
    from radar.app.cmd_app import streamlit_command
    from radar.app.serving import AppConfig

    cfg = AppConfig()
    cmd = streamlit_command(str(dash_ws.root), cfg)
    flags = dict(zip(cmd[5::2], cmd[6::2], strict=False))
    assert flags["--server.address"] == "127.0.0.1" and flags["--browser.gatherUsageStats"] == "false"
    assert flags["--server.headless"] == "true" and cmd[-2:] == ["--workspace", str(dash_ws.root)]
    assert cfg.loopback and not AppConfig(host="0.0.0.0").loopback


def test_review_queue_asks_about_uncertain_papers_and_records_answers(app: AppTest, dash_ws: Workspace) -> None:
    """Explore's review queue: the least-sure (paper, tag) pairs of the important tags; "Yes" is a correction."""
    _page(app, "explore")
    next(t for t in app.toggle if t.key == "ex_review_on").set_value(True).run(timeout=600)
    yes = [b for b in app.button if b.key and b.key.startswith("ex_rev_yes_")]
    assert yes, [m.value for m in app.markdown][:5]
    _, doc_id, tag = yes[0].key.removeprefix("ex_rev_yes_").split("_", 2)
    query = "SELECT COUNT(*) FROM tag_corrections WHERE doc_id = ? AND tag = ?"
    assert _count(dash_ws, query, doc_id, tag) == 0  # the queue skips corrected pairs
    yes[0].click().run(timeout=600)
    assert not app.exception, [e.value for e in app.exception]
    assert _count(dash_ws, query, doc_id, tag) == 1


def test_a_recommendations_last_run_reads_as_before() -> None:
    """A recommendation's last run (reports.runs.RunSummary, as report.json's evidence holds it) in one line: the
    text the dashboard showed when the row was the run's JSON (which held no ``line``)."""
    from radar.app.dashboard.reproduce import run_line
    from radar.reports.runs import RunSummary

    run = RunSummary(id="r1", method="dapo", baseline="grpo", setup="s", verdict="better", adoptable=True, adoption="a")
    assert run_line(run) == "dapo vs grpo: better (adoptable: a)"
    assert run_line(RunSummary(id="r2", method="x", baseline="grpo")) == "x vs grpo:  (not adoptable: )"
