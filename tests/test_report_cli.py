"""`radar report` end to end: files, --json paths, delivery to local SMTP and webhook receivers,
no second send, failures recorded and retried, escaping, and the HTML page in headless Chromium."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import msgspec
import pytest

from radar.crawler.documents import Documents
from radar.crawler.snapshot import import_snapshot
from radar.reports.deliver import webhook_recipient
from radar.reports.deliveries import Deliveries
from radar.store import Workspace
from tests.browser import ARTIFACTS, open_page, require_chromium, shared_browser
from tests.cli_helpers import run_cli
from tests.report_servers import SmtpSink, WebhookSink, delivery_toml, free_port
from tests.test_report_content import EVIL, WEEK, evil_post, tag_rows


def make_ws(root: Path, snapshot: Path, extra_toml: str = "") -> Workspace:
    from radar.store.config import DEFAULT_CONFIG_TEXT

    ws, _ = Workspace.init(root, config_text=DEFAULT_CONFIG_TEXT + "\n" + extra_toml)
    with ws.store() as store:
        import_snapshot(store, snapshot)
        Documents(store).upsert([evil_post()])
    tag_rows(ws)
    return ws


def test_help_lists_the_options(capsys: pytest.CaptureFixture[str]) -> None:
    for cmd, flags in (("report", ("--week", "--format", "--send", "--json")), ("weekly", ("--week", "--skip"))):
        res = run_cli(capsys, cmd, "--help")
        assert res.code == 0 and all(f in res.out for f in flags)


def test_report_writes_files_and_json_gives_the_paths(
    small_snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = make_ws(tmp_path / "ws", small_snapshot)
    res = run_cli(capsys, "--workspace", str(ws.root), "report", "--week", WEEK, "--format", "md,html", "--json")
    assert res.code == 0, res.err
    doc = res.json()
    assert doc["period"] == WEEK and doc["deliveries"] == []
    assert set(doc["paths"]) == {"md", "html", "json"}
    for path in doc["paths"].values():
        assert Path(path).parent == ws.reports_dir / WEEK and Path(path).stat().st_size > 500
    with ws.store() as store:
        assert doc["documents"] == len(Documents(store).matching(since="2024-02-12", until="2024-02-18T23:59:59Z"))
    data = json.loads(Path(doc["paths"]["json"]).read_text())
    assert data["headline"]["documents"] == doc["documents"]
    # the trends section is analysis.trends' own result for the week
    from radar.app import steps
    from radar.app.context import Radar

    assert doc["trends"] == "analysis.trends" and data["notes"]["trends"] == ""
    with ws.store() as store:
        trends = msgspec.to_builtins(steps.trends(Radar(ws), store, as_of=date(2024, 2, 18), window="week"))
    assert [e["term"] for e in data["trends"]["emerging"]] == [e["term"] for e in trends["emerging"][:10]]
    assert [m["name"] for m in data["trends"]["new_methods"]] == [m["name"] for m in trends["new_methods"][:10]]
    # the human output names the files; a rerun rewrites the same files
    res = run_cli(capsys, "--workspace", str(ws.root), "report", "--week", WEEK)
    assert res.code == 0 and str(ws.reports_dir / WEEK / "report.html") in res.out
    assert sorted(p.name for p in (ws.reports_dir / WEEK).iterdir()) == ["report.html", "report.json", "report.md"]
    # an empty week still writes a report, and says where the data is
    res = run_cli(capsys, "--workspace", str(ws.root), "report", "--week", "2030-W01")
    assert res.code == 0 and "no documents were published in 2030-W01" in res.err and "--week latest" in res.err


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--week", "2024-7"], "is not an ISO week"),
        (["--week", "2024-W54"], "does not exist"),
        (["--from", "2024-02-01"], "needs both"),
        (["--from", "2024-02-10", "--to", "2024-02-01"], "swap"),
        (["--format", "docx"], "formats"),
        (["--format", "pdf"], "WeasyPrint"),
        (["--week", "2024-W07", "--send"], "--send needs a channel"),
    ],
)
def test_bad_input_is_one_line_exit_1(
    argv: list[str], needle: str, small_snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = (
        make_ws(tmp_path / "ws", small_snapshot)
        if "--send" in argv or "pdf" in argv
        else Workspace.init(tmp_path / "ws")[0]
    )
    if "pdf" in argv:
        try:
            import weasyprint  # noqa: F401

            pytest.skip("WeasyPrint is installed: PDF works")
        except ImportError:
            pass
    res = run_cli(capsys, "--workspace", str(ws.root), "report", *argv)
    assert res.code == 1 and needle in res.err and res.err.count("\n") == 1, res.err
    assert res.out == ""


def test_send_delivers_once_by_email_and_webhook(
    small_snapshot: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import radar.reports.deliver

    renders: list[int] = []  # the real renderer, counted: two recipients, one rendering of the charts
    real = radar.reports.deliver.render_email_html
    monkeypatch.setattr(radar.reports.deliver, "render_email_html", lambda c: renders.append(1) or real(c))
    with SmtpSink() as smtp, WebhookSink() as hook:
        ws = make_ws(tmp_path / "ws", small_snapshot, delivery_toml(smtp.port, hook.url, str(tmp_path / "share")))
        res = run_cli(capsys, "--workspace", str(ws.root), "report", "--week", WEEK, "--send", "--json")
        assert res.code == 0, res.err
        statuses = {(d["channel"], d["status"]) for d in res.json()["deliveries"]}
        assert statuses == {("folder", "sent"), ("email", "sent"), ("webhook", "sent")}
        # email: one message per recipient, multipart text + HTML, feed text escaped in both parts
        assert sorted(r for rcpts, _ in smtp.messages for r in rcpts) == ["alice@lab.example", "bob@lab.example"]
        _, msg = smtp.messages[0]
        assert msg.get_content_type() == "multipart/alternative" and WEEK in msg["Subject"]
        text = msg.get_body(("plain",)).get_content()
        html = msg.get_body(("html",)).get_content()
        assert "## Recommendations" in text and "<h2" in html and "<style>" in html
        assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
        assert "<script>" not in text
        # charts: PNGs attached inline (text, then related(html, images)), no SVG in the mail
        assert [p.get_content_type() for p in msg.iter_parts()] == ["text/plain", "multipart/related"]
        parts = [p.get_content_type() for p in msg.walk()]
        assert {"text/plain", "text/html", "image/png"} <= set(parts)
        pngs = {p["Content-ID"].strip("<>"): p for p in msg.walk() if p.get_content_type() == "image/png"}
        cids = re.findall(r'src="cid:([^"]+)"', html)
        assert cids and set(cids) == set(pngs) and "<svg" not in html
        assert all(
            p.get_content_disposition() == "inline" and p.get_content()[:8] == b"\x89PNG\r\n\x1a\n"
            for p in pngs.values()
        )
        assert all(
            re.search(rf'src="cid:{re.escape(c)}" width="\d+" height="\d+" alt="[^"]*: [^"]*\d', html) for c in cids
        )
        assert len(msg.as_bytes()) < 250_000  # the demo week 2026-W26: 83 KB (README)
        assert len(renders) == 1
        assert smtp.messages[1][1].get_body(("html",)).get_content() == html  # both recipients get the same
        assert "<svg" in (ws.reports_dir / WEEK / "report.html").read_text()  # the page keeps inline SVG
        # webhook: Slack-compatible JSON, feed text escaped for mrkdwn
        assert len(hook.posts) == 1
        payload = hook.posts[0]
        assert payload["text"] and payload["blocks"][0]["type"] == "header" and payload["period"] == WEEK
        assert "<script>" not in json.dumps(payload)
        # folder copy
        assert (tmp_path / "share" / WEEK / "report.html").is_file()
        # second send: nothing goes out
        res = run_cli(capsys, "--workspace", str(ws.root), "report", "--week", WEEK, "--send")
        assert res.code == 0 and "delivered 0, already sent 4, failed 0" in res.out
        assert len(smtp.messages) == 2 and len(hook.posts) == 1
    with ws.store() as store:
        rows = Deliveries(store).find(period=WEEK)
    assert {r.status for r in rows} == {"sent"} and all(r.attempts == 1 for r in rows)
    assert "secret-token" not in repr(rows)  # webhook urls are secrets: stored by host and hash
    assert webhook_recipient(hook.url) in {r.recipient for r in rows}


def test_failed_delivery_is_recorded_exit_2_and_retried(
    small_snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()  # nothing listens yet: connection refused
    monkeypatch.setenv("RADAR_SMTP_PASSWORD", "hunter2-very-secret")
    with WebhookSink(status=500) as hook:
        toml = delivery_toml(port, hook.url).replace('tls = "none"', 'tls = "none"\nusername = "radar"')
        ws = make_ws(tmp_path / "ws", small_snapshot, toml)
        res = run_cli(capsys, "--workspace", str(ws.root), "report", "--week", WEEK, "--send")
        assert res.code == 2 and "failed" in res.err and "retries" in res.err
        assert "hunter2" not in res.out + res.err and "secret-token" not in res.out + res.err
        with ws.store() as store:
            rows = {(r.channel, r.status) for r in Deliveries(store).find(period=WEEK)}
            assert rows == {("email", "failed"), ("webhook", "failed")}
            assert all(r.last_error and "hunter2" not in r.last_error for r in Deliveries(store).find())
        # the next run retries and succeeds; report files were written all along
        assert (ws.reports_dir / WEEK / "report.html").is_file()
        hook.status = 200
        with SmtpSink(port, password="hunter2-very-secret") as smtp:
            res = run_cli(capsys, "--workspace", str(ws.root), "report", "--week", WEEK, "--send", "--json")
            assert res.code == 0, res.err
            assert {d["status"] for d in res.json()["deliveries"]} == {"sent"}
            assert len(smtp.messages) == 2 and len(hook.posts) == 1 and smtp.logins == ["radar", "radar"]
    with ws.store() as store:
        assert all(r.status == "sent" and r.attempts == 2 for r in Deliveries(store).find(period=WEEK))


def test_summary_endpoint_is_used_and_failures_fall_back(
    small_snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with WebhookSink() as llm:  # stands in for a local vLLM/SGLang server's /v1/chat/completions
        body = {"choices": [{"message": {"content": "ABSTRACTIVE <b>summary</b> from the local server."}}]}
        llm.answer = json.dumps(body).encode()
        base = llm.url.rsplit("/hooks", 1)[0]
        toml = f'[report]\nsummary_endpoint = "{base}/v1"\nsummary_model = "tiny"\nsummary_timeout_s = 5\n'
        ws = make_ws(tmp_path / "ws", small_snapshot, toml)
        res = run_cli(capsys, "--workspace", str(ws.root), "report", "--week", WEEK, "--json")
        assert res.code == 0, res.err
        html = Path(res.json()["paths"]["html"]).read_text()
        assert llm.posts and llm.posts[0]["model"] == "tiny"
        assert "ABSTRACTIVE &lt;b&gt;summary&lt;/b&gt;" in html
        llm.status = 503
        res = run_cli(capsys, "--workspace", str(ws.root), "report", "--week", WEEK, "--json")
        data = json.loads(Path(res.json()["paths"]["json"]).read_text())
        cards = data.pop("new_this_week")
        assert res.code == 0 and "ABSTRACTIVE" not in json.dumps(data)
        assert data["notes"]["summaries"].startswith("extractive (the summary endpoint failed")
        # the cards' "changes" lines the endpoint rewrote on the first run are kept in the store: asked once each
        lines = [c["changes"] for c in cards["cards"] + cards["compact"]]
        assert lines and all(line.startswith("ABSTRACTIVE") for line in lines)


def test_html_renders_in_chromium_without_errors(
    small_snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require_chromium()
    ws = make_ws(tmp_path / "ws", small_snapshot)
    res = run_cli(capsys, "--workspace", str(ws.root), "report", "--week", WEEK, "--json")
    html = Path(res.json()["paths"]["html"])
    with shared_browser() as browser:  # one Chromium, a fresh context per page
        problems = open_page(
            html.as_uri(), ARTIFACTS / "report-desktop.png", wait_for_text="Recommendations", browser=browser
        )
        assert problems == []
        problems = open_page(
            html.as_uri(),
            ARTIFACTS / "report-phone.png",
            wait_for_text="Top papers",
            viewport=(390, 844),
            browser=browser,
        )
        assert problems == []
    assert (ARTIFACTS / "report-phone.png").stat().st_size > 10_000
    assert re.search(r"<svg[^>]+role=\"img\"", html.read_text())
    assert EVIL not in html.read_text()


def test_concurrent_sender_refused_and_range_report(
    small_snapshot: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = make_ws(tmp_path / "ws", small_snapshot, f'[delivery]\nfolder = "{tmp_path / "share"}"\n')
    with ws.lock("deliver"):  # another process is sending
        res = run_cli(capsys, "--workspace", str(ws.root), "report", "--week", WEEK, "--send")
    assert res.code == 1 and "another radar process is delivering" in res.err
    assert not (tmp_path / "share").exists()
    res = run_cli(capsys, "--workspace", str(ws.root), "report", "--from", "2024-02-01", "--to", "2024-02-14", "--json")
    assert res.code == 0, res.err
    doc = res.json()
    assert doc["period"] == "2024-02-01_2024-02-14" and Path(doc["paths"]["html"]).parent.name == doc["period"]
    with ws.store() as store:
        assert doc["documents"] == len(Documents(store).matching(since="2024-02-01", until="2024-02-14T23:59:59Z"))
