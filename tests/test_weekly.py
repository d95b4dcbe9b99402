"""`radar weekly` against local servers: crawl -> index -> tag -> trends -> report -> deliver, once.

The feeds come from the local feed server (recorded real feeds), the report goes to a local SMTP
server and a local webhook receiver; a second run delivers nothing; overlapping runs are refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from radar.crawler.documents import Documents
from radar.index.embeddings import Embeddings
from radar.index.tags_table import Tags
from radar.reports.deliveries import Deliveries
from radar.repro.records import RunRecord
from radar.repro.runs_table import Runs
from radar.store import Workspace
from radar.store.errors import RadarError
from tests.cli_helpers import run_cli
from tests.conftest import make_workspace
from tests.feedserver import FeedServer, fixture_bytes
from tests.report_servers import SmtpSink, WebhookSink, delivery_toml

WEEK = "2025-W34"  # the recorded arXiv listing is of 2025-08-20


def sources(server: FeedServer) -> str:
    server.static("/hamel.xml", fixture_bytes("blog_hamel_dev.xml"))
    server.static("/atom/cs.AI+cs.LG", fixture_bytes("arxiv_rss_atom_cs.AI_2025-08-20.xml"), "application/atom+xml")
    return f"""
[[sources]]
name = "hamel"
type = "feed"
url = "{server.url}/hamel.xml"

[[sources]]
name = "listing"
type = "arxiv-rss"
base_url = "{server.url}/atom/"
categories = ["cs.AI", "cs.LG"]
min_interval_s = 0.0
"""


@pytest.mark.slow  # the whole pipeline: embeds, and trains the tagger on first use in a session (~100 s cold)
def test_weekly_delivers_once_and_reruns_cleanly(
    server: FeedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with SmtpSink() as smtp, WebhookSink() as hook:
        ws = make_workspace(tmp_path / "ws", sources(server) + delivery_toml(smtp.port, hook.url))
        res = run_cli(capsys, "--workspace", str(ws.root), "weekly", "--week", WEEK, "--json")
        assert res.code == 0, res.out + res.err
        doc = res.json()
        steps = {s["step"]: s for s in doc["steps"]}
        assert list(steps) == ["crawl", "index", "alerts", "tag", "trends", "report", "deliver", "digests", "reproduce"]
        assert steps["reproduce"]["summary"] == "off ([repro] weekly_runs = 0)"
        assert all(s["ok"] for s in steps.values()), doc["summary"]
        with ws.store() as store:
            n_docs = Documents(store).count()
            in_week = Documents(store).matching(since="2025-08-18", until="2025-08-24T23:59:59Z")
            assert n_docs > 20 and len(in_week) >= 5
            assert sum(Embeddings(store).models().values()) == n_docs  # the index step embedded everything
        assert f"{n_docs} new" in steps["crawl"]["summary"]
        assert f"{n_docs} decided" in steps["tag"]["summary"]
        report = json.loads(Path(doc["paths"]["json"]).read_text())
        assert report["headline"]["documents"] == len(in_week)
        with ws.store() as store:
            assert report["headline"]["tagged"] == len(Tags(store).of(in_week))
        assert sorted(d["status"] for d in doc["deliveries"]) == ["sent", "sent", "sent"]
        assert len(smtp.messages) == 2 and len(hook.posts) == 1
        assert doc["summary"].startswith(f"weekly {WEEK}: crawl: ")

        # a second run (cron firing twice): nothing new, nothing sent, exit 0, one line
        res = run_cli(capsys, "--workspace", str(ws.root), "weekly", "--week", WEEK)
        assert res.code == 0, res.out + res.err
        assert res.out.count("\n") == 1 and "crawl: 0 new" in res.out and "delivered 0, already sent 3" in res.out
        assert len(smtp.messages) == 2 and len(hook.posts) == 1


def test_weekly_retries_an_earlier_failed_delivery(
    server: FeedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with WebhookSink(status=500) as hook:
        toml = sources(server) + f'[delivery.webhook]\nurl = "{hook.url}"\n'
        ws = make_workspace(tmp_path / "ws", toml)
        skip = "index,tag,trends"
        res = run_cli(capsys, "--workspace", str(ws.root), "weekly", "--week", WEEK, "--skip", skip)
        assert res.code == 2 and "deliver FAILED" in res.out
        hook.status = 200
        # next week's run delivers next week and retries the failed one
        res = run_cli(capsys, "--workspace", str(ws.root), "weekly", "--week", "2025-W35", "--skip", skip, "--json")
        assert res.code == 0, res.out
        assert sorted(p["period"] for p in hook.posts) == ["2025-W34", "2025-W35"]
        with ws.store() as store:
            assert {r.period: r.status for r in Deliveries(store).find()} == {"2025-W34": "sent", "2025-W35": "sent"}


def test_weekly_takes_the_crawl_and_tag_locks(
    server: FeedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `radar crawl` (or `radar tag`) in progress: weekly's crawl (tag) step waits its turn and says so,
    instead of fetching every source a second time; the report still goes out."""
    ws = make_workspace(tmp_path / "ws", sources(server))
    with ws.lock("crawl"), ws.lock("tag"):
        res = run_cli(
            capsys, "--workspace", str(ws.root), "weekly", "--week", WEEK, "--skip", "index,trends,deliver", "--json"
        )
    steps = {s["step"]: s for s in res.json()["steps"]}
    assert res.code == 2
    assert not steps["crawl"]["ok"] and "another `radar crawl` is running" in steps["crawl"]["summary"]
    assert not steps["tag"]["ok"] and "another `radar tag` is running" in steps["tag"]["summary"]
    assert not server.requests  # nothing was fetched while the crawl lock was held
    assert steps["report"]["ok"] and (ws.reports_dir / WEEK / "report.html").is_file()


def test_overlapping_runs_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws, _ = Workspace.init(tmp_path / "ws")
    with ws.lock("weekly"):  # a run in progress (flock: another open file description conflicts)
        res = run_cli(capsys, "--workspace", str(ws.root), "weekly", "--week", WEEK)
    assert res.code == 1 and "another `radar weekly` is running" in res.err and res.err.count("\n") == 1
    assert not (ws.reports_dir / WEEK).exists()


@pytest.mark.parametrize(
    "argv, needle", [(["--week", "2025W34"], "is not an ISO week"), (["--skip", "crawl,nap"], "unknown step")]
)
def test_weekly_bad_input_is_one_line(
    argv: list[str], needle: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws, _ = Workspace.init(tmp_path / "ws")
    res = run_cli(capsys, "--workspace", str(ws.root), "weekly", *argv)
    assert res.code == 1 and needle in res.err and res.err.count("\n") == 1


def test_a_second_process_is_refused_while_one_runs(
    server: FeedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import subprocess
    import sys
    import time

    from tests.conftest import ROOT
    from tests.feedserver import Reply

    ws = make_workspace(tmp_path / "ws", sources(server))
    server.routes["/hamel.xml"] = lambda req: Reply(200, fixture_bytes("blog_hamel_dev.xml"), delay=4.0)
    first = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "radar.app.cli",
            "--workspace",
            str(ws.root),
            "weekly",
            "--week",
            WEEK,
            "--skip",
            "index,tag,trends",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not server.hits("/hamel.xml") and time.monotonic() < deadline:  # the first run is crawling
            time.sleep(0.1)
        assert server.hits("/hamel.xml"), "the first run never started crawling"
        res = run_cli(capsys, "--workspace", str(ws.root), "weekly", "--week", WEEK)
        assert res.code == 1 and "another `radar weekly` is running" in res.err
        out, err = first.communicate(timeout=120)
    finally:
        first.kill()
    assert first.returncode == 0, err
    assert out.startswith(f"weekly {WEEK}: crawl: ") and (ws.reports_dir / WEEK / "report.html").is_file()


# -- the reproduce step: the week's `reproduce` recommendations queued once, within [repro] weekly_runs --------
SKIP_ALL_BUT_REPORT = "crawl,index,alerts,tag,trends,deliver,digests"
REPRO_TOML = """
[profile]
terms = ["DAPO", "GSPO", "Dr. GRPO"]

[repro]
weekly_runs = {budget}
run_queued = false
seeds = 2
steps = 4
task = "sorting"
"""


def _repro_ws(tmp_path: Path, budget: int) -> Workspace:
    from radar.crawler.documents import Document

    ws, _ = Workspace.init(tmp_path / "ws", config_text=REPRO_TOML.format(budget=budget))
    docs = [
        Document(
            id=f"2508.{10000 + i}",
            kind="paper",
            source="test",
            title=title,
            # each compares against the method it builds on: the week's evidence a reproduction needs
            abstract=f"{title}. It outperforms {'DAPO' if 'DAPO' in title else 'GSPO'} and GRPO on math benchmarks.",
            published=f"2025-08-{19 + i % 3 + 7 * (i >= 4)}T00:00:00Z",  # four in 2025-W34, four in W35
            url=f"https://arxiv.org/abs/2508.{10000 + i}",
        )
        for i, title in enumerate(
            [
                "Scaling DAPO to long chains of thought",
                "DAPO with curriculum sampling",
                "Stabilising GSPO for mixture-of-experts",
                "GSPO at the sequence level revisited",
                "DAPO for code generation",
                "Token-level losses: DAPO without dynamic sampling",
                "GSPO for vision-language models",
                "Why GSPO clips whole sequences",
            ]
        )
    ]
    with ws.store() as store:
        Documents(store).upsert(docs)
    return ws


def _weekly(capsys: pytest.CaptureFixture[str], ws: Workspace, week: str = WEEK) -> dict:  # type: ignore[type-arg]
    res = run_cli(
        capsys, "--workspace", str(ws.root), "weekly", "--week", week, "--skip", SKIP_ALL_BUT_REPORT, "--json"
    )
    assert res.code == 0, res.out + res.err
    doc = res.json()
    assert [s["step"] for s in doc["steps"]][-1] == "reproduce"
    return doc


def _queued(ws: Workspace) -> list[RunRecord]:
    with ws.store() as store:
        return Runs(store).list_runs(kind="repro")


def test_weekly_queues_the_weeks_reproduce_methods_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = _repro_ws(tmp_path, budget=3)
    doc = _weekly(capsys, ws)
    report = json.loads(Path(doc["paths"]["json"]).read_text())
    wanted = {r["evidence"]["preset"] for r in report["recommendations"] if r["action"] == "reproduce"}
    assert wanted == {"dapo", "gspo"}, report["recommendations"]
    step = doc["steps"][-1]
    assert step["ok"] and step["summary"].startswith("2 queued (") and "radar repro work" in step["summary"]
    runs = _queued(ws)
    assert sorted(r.method for r in runs) == ["dapo", "gspo"]
    for run in runs:
        p = run.params
        assert run.status == "queued" and not run.pid  # run_queued = false: nothing started
        assert (p["queued_by"], p["queued_for"], p["task"], p["seeds"], p["total_steps"]) == (
            "weekly",
            WEEK,
            "sorting",
            2,
            4,
        )
        assert len(p["dedupe_key"]) == 20 and p["look"] == 1 and p["first_pair"] == 0 and p["power"]["seeds"] == 2
    # the same week again (cron firing twice), and the next week: the same experiments are not queued twice
    for week in (WEEK, "2025-W35"):
        again = _weekly(capsys, ws, week)["steps"][-1]["summary"]
        assert again.startswith("0 queued") and "dapo already queued" in again and "gspo already queued" in again
    assert len(_queued(ws)) == 2


def test_weekly_budget_counts_the_weeks_earlier_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = _repro_ws(tmp_path, budget=1)
    first = _weekly(capsys, ws)["steps"][-1]["summary"]
    assert first.startswith("1 queued (dapo)") or first.startswith("1 queued (gspo)")
    second = _weekly(capsys, ws)["steps"][-1]["summary"]
    assert second.startswith("0 queued") and "budget of 1 is used" in second
    assert len(_queued(ws)) == 1
    ws.config_path.write_text(ws.config_path.read_text().replace("weekly_runs = 1", "weekly_runs = 0"))
    assert _weekly(capsys, ws)["steps"][-1]["summary"] == "off ([repro] weekly_runs = 0)"


def _finish(ws: Workspace, label_of: dict[str, str], evidence: str) -> None:
    """Finish the queued runs with calibrated verdicts of class ``evidence`` (what a toy worker writes is
    "pipeline check"; a real checkpoint's, "evidence")."""
    from radar.store.models import utc_now

    test = {"test": "paired t", "n": 2, "effect": 0.05, "interval": [0.02, 0.08], "p": 0.004, "p_adjusted": 0.008}
    with ws.store() as store:
        for run in Runs(store).list_runs(kind="repro"):
            label = label_of[run.method]
            verdict = {
                "overall": label,
                "summary": f"-> {label}",
                "metrics": {"heldout_greedy": test | {"label": label}},
                "seed_noise": {"metric": "heldout_greedy", "sd_difference": 0.01, "n": 2},
                "evidence": {"class": evidence, "reason": "as written by the worker"},
                "aa": run.method == run.baseline,
            }
            Runs(store).update_run(run.id, status="done", finished_at=utc_now(), result={"verdict": verdict})


def test_a_finished_run_drives_next_weeks_recommendation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Toy runs are pipeline checks: a queued dapo run that finishes 'better' is no "adopt" (nor gspo's 'worse' a
    "watch" by the repro rule). With the class of evidence a real checkpoint run carries and a calibrated A/A run
    on the same setting, the next report says adopt / watch by the repro rules (dapo survives Holm across the
    week's two runs against grpo); the reproduce step asks for neither again."""
    ws = _repro_ws(tmp_path, budget=3)
    _weekly(capsys, ws)
    labels = {"dapo": "better", "gspo": "worse", "grpo": "no clear difference"}
    _finish(ws, labels, "pipeline check")

    def rules(doc: dict) -> dict[str, tuple[str, str]]:  # type: ignore[type-arg]
        report = json.loads(Path(doc["paths"]["json"]).read_text())
        return {
            r["evidence"]["preset"]: (r["action"], r["rule"])
            for r in report["recommendations"]
            if r["evidence"]["preset"]
        }

    doc = _weekly(capsys, ws)
    toy = rules(doc)
    assert toy["dapo"] != ("adopt", "repro-better") and toy["gspo"][1] != "repro-worse", toy
    report = json.loads(Path(doc["paths"]["json"]).read_text())
    (dapo,) = [r for r in report["runs"] if r["method"] == "dapo"]
    assert dapo["evidence_class"] == "pipeline check" and not dapo["adoptable"] and "sorting, 4 steps" in dapo["line"]
    md = (Path(doc["paths"]["json"]).parent / "report.md").read_text()
    assert "2 seed pairs" in md and "pipeline check" in md  # the report's line names steps, seed pairs and class

    from radar.app import wiring
    from radar.app.context import Radar

    api = wiring.reproductions(Radar.at(ws.root))
    api.submit(api.spec("grpo", "grpo", task="sorting", seeds=2, steps=4))  # the A/A run on the same setting
    _finish(ws, labels, "evidence")
    doc = _weekly(capsys, ws)
    assert rules(doc) == {"dapo": ("adopt", "repro-better"), "gspo": ("watch", "repro-worse")}
    assert doc["steps"][-1]["summary"] == "0 queued"
    assert len(_queued(ws)) == 3


def test_dashboard_reproduce_button_queues_the_same_run_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Overview and Reports show the report's recommendations with a Reproduce button: it queues what weekly would
    (same settings, same dedupe key), once; weekly then finds it already queued."""
    from streamlit.testing.v1 import AppTest

    from radar.app.dashboard import MAIN_SCRIPT

    ws = _repro_ws(tmp_path, budget=0)  # weekly queues nothing itself here: the button does
    _weekly(capsys, ws)
    monkeypatch.setenv("RADAR_HOME", str(ws.root))
    at = AppTest.from_file(str(MAIN_SCRIPT), default_timeout=120)
    at.run()
    at.switch_page("page_overview.py").run()
    assert not at.exception, [e.value for e in at.exception]
    buttons = [b for b in at.button if b.label == "Reproduce"]
    assert {b.key.rsplit("-", 1)[1] for b in buttons} == {"dapo", "gspo"}
    next(b for b in buttons if b.key.endswith("-dapo")).click().run()
    assert not at.exception, [e.value for e in at.exception]
    runs = _queued(ws)
    assert len(runs) == 1 and runs[0].method == "dapo" and runs[0].status == "queued"
    assert runs[0].params["queued_by"] == "dashboard (overview)" and not runs[0].pid  # run_queued = false
    assert any("queued " + runs[0].id.replace("-", "\\-") in s.value for s in at.success), [s.value for s in at.success]
    # the Reports page's button for the same method: the same experiment, not queued twice
    at.switch_page("page_reports.py").run()
    next(b for b in at.button if b.label == "Reproduce" and b.key.endswith("-dapo")).click().run()
    assert not at.exception and len(_queued(ws)) == 1
    assert any("already queued" in i.value for i in at.info), [i.value for i in at.info]
    # and weekly, given a budget, finds it queued too
    ws.config_path.write_text(ws.config_path.read_text().replace("weekly_runs = 0", "weekly_runs = 1"))
    summary = _weekly(capsys, ws)["steps"][-1]["summary"]
    assert "dapo already queued" in summary and "1 queued (gspo)" in summary


@pytest.mark.slow  # the Repro page imports torch (its form lists the size presets): ~20 s more
def test_repro_page_reproduce_button(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamlit.testing.v1 import AppTest

    from radar.app.dashboard import MAIN_SCRIPT

    ws = _repro_ws(tmp_path, budget=0)
    preset = '\n[[repro.presets]]\nname = "dapo-eps03"\nbase = "dapo"\nsettings = { epsilon_high = 0.3 }\n'
    ws.config_path.write_text(ws.config_path.read_text() + preset)
    _weekly(capsys, ws)
    monkeypatch.setenv("RADAR_HOME", str(ws.root))
    at = AppTest.from_file(str(MAIN_SCRIPT), default_timeout=180)
    at.run()
    at.switch_page("page_repro.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "dapo-eps03" in next(s for s in at.selectbox if s.label == "Method").options  # the form offers it
    for _ in range(2):  # the second click finds it queued
        next(b for b in at.button if b.label == "Reproduce" and b.key.endswith("-gspo")).click().run()
        assert not at.exception, [e.value for e in at.exception]
    runs = _queued(ws)
    assert [r.method for r in runs] == ["gspo"] and runs[0].params["queued_by"] == "dashboard (repro)"
    assert any("already queued" in i.value for i in at.info)


def test_dedupe_key_follows_the_presets_settings(tmp_path: Path) -> None:
    """A run started by hand (an older record, without keys) counts as the same experiment; editing a radar.toml
    preset's settings makes a new one (the old run's own definition is used for its key, and does not leak into
    the current catalog)."""
    from radar.app import wiring
    from radar.app.context import Radar
    from radar.repro.spec import record_params

    preset = '\n[[repro.presets]]\nname = "dapo-eps03"\nbase = "dapo"\nsettings = { epsilon_high = 0.3 }\n'
    ws, _ = Workspace.init(tmp_path / "ws", config_text=REPRO_TOML.format(budget=1) + preset)
    api = wiring.reproductions(Radar.at(ws.root))
    spec = api.configured_spec("dapo-eps03")
    with ws.store() as store:  # `radar repro run --method dapo-eps03 ...` by an older radar, finished
        Runs(store).create_run(
            "by-hand", "repro", record_params(spec, api.presets, ws.run_dir("by-hand"), ws.policy_cache_dir)
        )
        Runs(store).update_run("by-hand", status="done")
    assert api.queue("dapo-eps03", queued_by="test").status == "already done"
    assert api.queue("dapo", queued_by="test").new  # another preset: another experiment
    ws.config_path.write_text(ws.config_path.read_text().replace("epsilon_high = 0.3", "epsilon_high = 0.35"))
    edited = wiring.reproductions(Radar.at(ws.root))
    queued = edited.queue("dapo-eps03", queued_by="test")
    assert queued.new and edited.presets.get("dapo-eps03").config["epsilon_high"] == 0.35
    assert api.presets.get("dapo-eps03").config["epsilon_high"] == 0.3  # the older catalog is untouched
    with ws.store() as store:
        run = Runs(store).get_run(queued.run_id)
        assert run is not None and run.params["user_presets"][0]["settings"] == {"epsilon_high": 0.35}
        assert run.params["look"] == 1  # another experiment: its own first look, from seed pair 0
    assert edited.queue("dapo-eps03", queued_by="test").status == "already queued"
    ws.config_path.write_text(REPRO_TOML.format(budget=1))  # the preset removed from radar.toml: gone
    with pytest.raises(RadarError, match="unknown method 'dapo-eps03'"):
        wiring.reproductions(Radar.at(ws.root)).queue("dapo-eps03", queued_by="test")


def test_a_second_look_at_an_experiment_gets_fresh_seed_pairs(tmp_path: Path) -> None:
    """Seeds are fixed at submit; running the same experiment again (more seeds, or the same: a replication) is a
    new run, numbered as the next look, on seed pairs no earlier look used."""
    from radar.app import wiring
    from radar.app.context import Radar

    ws, _ = Workspace.init(tmp_path / "ws", config_text=REPRO_TOML.format(budget=1))
    api = wiring.reproductions(Radar.at(ws.root))
    first = api.submit(api.spec("dapo", task="sorting", seeds=3, steps=4))
    second = api.submit(api.spec("dapo", task="sorting", seeds=5, steps=4))
    third = api.submit(api.spec("dapo", task="sorting", seeds=3, steps=8))  # other steps: another experiment
    assert (first.params["look"], first.params["first_pair"]) == (1, 0)
    assert (second.params["look"], second.params["first_pair"]) == (2, 3) and second.experiment == first.experiment
    assert (third.params["look"], third.params["first_pair"]) == (1, 0) and third.experiment != first.experiment
    assert second.setup.endswith("5 seed pairs (3-7)")
    api.cancel(first.id)  # a cancelled look frees its pairs
    assert api.submit(api.spec("dapo", task="sorting", seeds=2, steps=4)).params["first_pair"] == 8


def test_repro_work_on_an_empty_queue_and_a_second_worker(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws, _ = Workspace.init(tmp_path / "ws")
    res = run_cli(capsys, "--workspace", str(ws.root), "repro", "work")
    assert res.code == 0 and "the queue is empty" in res.out
    with ws.lock("repro work"):  # a worker is draining the queue
        res = run_cli(capsys, "--workspace", str(ws.root), "repro", "work")
    assert res.code == 1 and "another `radar repro work` is running" in res.err and res.err.count("\n") == 1


def test_dedupe_key_of_a_dataset_run_is_the_data_it_trained_on(tmp_path: Path) -> None:
    import hashlib
    from dataclasses import replace

    from radar.app.reproductions import dedupe_key
    from radar.repro.methods import BUILTIN
    from radar.repro.spec import RunSpec

    data = tmp_path / "math.jsonl"
    data.write_text('{"prompt": "1+1?", "answer": "2"}\n', encoding="utf-8")
    trained_on = hashlib.sha256(data.read_bytes()).hexdigest()
    spec = RunSpec(method="dapo", baseline="grpo", model="m", dataset=str(data), seeds=2, steps=4)
    before = dedupe_key(spec, BUILTIN)
    data.write_text('{"prompt": "2+2?", "answer": "4"}\n', encoding="utf-8")  # the file changed since that run
    assert dedupe_key(spec, BUILTIN) != before  # a new experiment on the new data ...
    assert dedupe_key(spec, BUILTIN, trained_on) == before  # ... which the earlier run (its recorded hash) is not
    elsewhere = tmp_path / "copy.jsonl"
    elsewhere.write_bytes(data.read_bytes())
    assert dedupe_key(replace(spec, dataset=str(elsewhere)), BUILTIN) == dedupe_key(spec, BUILTIN)  # same data


def test_queueing_waits_for_the_queue_lock_so_two_clicks_queue_one_run(tmp_path: Path) -> None:
    """The look-up and the submit are one step under the workspace's queue lock: a second request (another
    dashboard session, or weekly) waits for it, then finds the first run instead of queueing a duplicate."""
    import threading

    from radar.app import wiring
    from radar.app.context import Radar
    from radar.app.reproductions import QUEUE_LOCK, Queued

    ws = _repro_ws(tmp_path, budget=1)
    api = wiring.reproductions(Radar.at(ws.root))
    got: list[Queued] = []
    second = threading.Thread(target=lambda: got.append(api.queue("dapo", queued_by="test")))
    with ws.lock(QUEUE_LOCK):  # the first request, between its look-up and its submit
        second.start()
        second.join(timeout=0.5)
        assert second.is_alive() and not got  # waiting, not refused and not queued past the lock
    second.join(timeout=60)
    assert len(got) == 1 and got[0].new
    again = api.queue("dapo", queued_by="test")
    assert not again.new and again.run_id == got[0].run_id and len(_queued(ws)) == 1
