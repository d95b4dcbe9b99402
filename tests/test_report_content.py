"""Report content and rendering on real papers: structure and counts checked against the store."""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import msgspec
import pytest

from radar.analysis.trends.result import PeriodTrends, Topic, TrendsResult
from radar.app import wiring
from radar.app.context import Radar
from radar.crawler.documents import Document, Documents
from radar.crawler.snapshot import import_snapshot
from radar.index.tags_table import Tags
from radar.reports.config import DeliveryConfig, Profile, ReportConfig
from radar.reports.content import ReportInputs, gather, tag_groups
from radar.reports.errors import ReportError
from radar.reports.period import Period, last_full_week, latest_data_week, parse_range, parse_week, resolve_period
from radar.reports.recommend import RULES, Evidence, decide, match_preset, preset_patterns
from radar.reports.render import ChartSink, md_escape, render, render_email_html
from radar.reports.summarize import EndpointSummarizer, ExtractiveSummarizer, make_summarizer
from radar.repro.runs_table import Runs
from radar.store import ConfigError, Store, Workspace
from radar.store.dates import entered
from radar.store.models import utc_now
from tests import trend_rows

WEEK = "2024-W07"  # Mon 12 - Sun 18 Feb 2024: inside the first 500 snapshot lines, with 4+ weeks before it
EVIL = "<script>alert(1)</script> [click](javascript:alert(2)) *GRPO* tricks"
TAG_RULES = {  # a keyword rule standing in for the tagger in these tests (real taxonomy names)
    "rl-policy-optimization": re.compile(r"reinforcement learning|policy optimization|\bRLHF\b|\bPPO\b", re.I),
    "inference-serving": re.compile(r"\binference\b|serving|KV cache", re.I),
    "model-compression": re.compile(r"quantiz|pruning|distillation", re.I),
    "llm-reasoning": re.compile(r"reasoning|chain-of-thought", re.I),
}
TRENDS = {
    "as_of": "2024-02-18",
    "emerging": [
        {
            "term": "<img src=x onerror=alert(3)>",
            "score": 3.1,
            "recent_count": 4,
            "recent_share": 0.02,
            "baseline_share": 0.004,
            "first_seen": "2024-02-01",
            "example_ids": [],
        }
    ],
    "declining": [
        {
            "term": "instruction tuning",
            "score": -1.5,
            "recent_count": 1,
            "recent_share": 0.004,
            "baseline_share": 0.01,
            "first_seen": "2024-01-02",
            "example_ids": [],
        }
    ],
    "tags": {},
    "topics": [
        {
            "id": "1",
            "label": "speculative decoding",
            "keywords": ["draft", "verify"],
            "size": 12,
            "recent_size": 5,
            "growth": 2.0,
            "example_ids": [],
        }
    ],
    "new_methods": [
        {
            "name": "DPO",
            "first_seen": "2024-01-03",
            "first_id": "",
            "count": 18,
            "recent_count": 7,
            "growth": 3.0,
            "example_ids": [],
        },  # in 7 papers of the week
        {
            "name": "Mamba",
            "first_seen": "2024-01-10",
            "first_id": "",
            "count": 2,
            "recent_count": 0,
            "growth": 0.5,
            "example_ids": [],
        },
    ],  # none in the week: nothing to recommend
}


def gather_content(
    ws: Workspace, store: Store, period: Period, cfg: ReportConfig, profile: Profile, *, trends: dict[str, Any]
) -> dict[str, Any]:
    """reports.content.gather wired as app.steps.report wires it (the real taxonomy, runs, presets, method cards
    and contribution areas), with the trends given."""
    from radar.app import steps

    radar = Radar(ws)
    catalog = wiring.repro_catalog(radar)
    inputs = ReportInputs(
        period,
        cfg,
        profile,
        trends=PeriodTrends(
            label=period.label,
            start=period.start.isoformat(),
            end=period.end.isoformat(),
            tags=TrendsResult(as_of=period.end.isoformat(), window="week"),
            terms=trend_rows.trends({"window": "month", **trends}),
        ),
        grouping=tag_groups({t.name: t.group for t in radar.taxonomy.tags}, store),
        summarizer=make_summarizer(cfg),
        runs=wiring.reproductions(radar, catalog).finished(Runs(store)),
        presets=catalog.titles(),
        cards=steps.period_cards(radar, store, period),
        knobs=wiring.preset_knobs(catalog),
        preset_papers={name: m.arxiv for name, m in catalog.methods.items()},
        area_of=steps.contribution_areas(store, period),
    )
    return gather(store, inputs).document()


def tag_rows(ws: Workspace) -> int:
    with ws.store() as store:
        rows = [
            (d.id, tag)
            for d in Documents(store).scan(kind="paper")
            for tag, pat in TAG_RULES.items()
            if pat.search(d.title + " " + d.abstract)
        ]
        with store.transaction() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO document_tags (doc_id, tag, score, origin, created_at) "
                "VALUES (?, ?, 1.0, 'rule', ?)",
                [(i, t, utc_now()) for i, t in rows],
            )
    return len(rows)


def evil_post(published: str = "2024-02-15T09:00:00Z") -> Document:
    return Document(
        id="post:evil0000000000",
        kind="post",
        source="evilblog",
        title=EVIL,
        abstract="<b>bold</b> claims & a <script>steal()</script> body. Second sentence here.",
        published=published,
        url="https://evil.example/post?x=1&y=<2>",
    )


@pytest.fixture(scope="module")
def report_ws(small_snapshot: Path, tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    ws, _ = Workspace.init(tmp_path_factory.mktemp("report") / "ws")
    with ws.store() as store:
        import_snapshot(store, small_snapshot)
        Documents(store).upsert([evil_post()])
    assert tag_rows(ws) > 50
    return ws


def test_periods_parse_and_refuse_with_one_line() -> None:
    p = parse_week("2025-W20")
    assert (p.start, p.end, p.days) == (date(2025, 5, 12), date(2025, 5, 18), 7)
    assert p.since == "2025-05-12T00:00:00Z" and p.until == "2025-05-18T23:59:59Z"
    assert [t.label for t in p.trailing(2)] == ["2025-W18", "2025-W19"]
    assert parse_week("2021-W01").start == date(2021, 1, 4)  # ISO year differs from the calendar year
    assert parse_week("2020-W53").end == date(2021, 1, 3)
    assert last_full_week(date(2025, 5, 21)).label == "2025-W20"
    for bad in ("2025-20", "2025-W60", "2021-W53", "W20", "2025-w20x", ""):
        with pytest.raises(ReportError) as err:
            parse_week(bad)
        assert "\n" not in str(err.value) and "YYYY-Www" in str(err.value)
    r = parse_range("2025-05-01", "2025-05-14")
    assert r.label == "2025-05-01_2025-05-14" and r.days == 14 and r.shifted(-1).start == date(2025, 4, 17)
    with pytest.raises(ReportError, match="swap"):
        parse_range("2025-05-14", "2025-05-01")
    with pytest.raises(ReportError, match="either --week"):
        resolve_period(None, week="2025-W20", since="2025-05-01", until="2025-05-02")  # type: ignore[arg-type]


def test_latest_data_week_is_the_last_week_the_papers_cover(report_ws: Workspace) -> None:
    with report_ws.store() as store:
        newest = max(entered(d.id, d.published) for d in Documents(store).scan(kind="paper"))  # store.dates
        week = latest_data_week(store)
    assert week.end <= date.fromisoformat(newest[:10]) < week.end + timedelta(days=7)
    assert week.start.isoweekday() == 1 and week.is_week


def test_config_errors_name_the_fix() -> None:
    with pytest.raises(ConfigError, match="formats"):
        ReportConfig.from_section({"formats": ["docx"]})
    with pytest.raises(ConfigError, match="summary_model"):
        ReportConfig.from_section({"summary_endpoint": "http://127.0.0.1:8000/v1"})
    with pytest.raises(ConfigError, match="valid keys"):
        ReportConfig.from_section({"top": 3})
    with pytest.raises(ConfigError, match="weight"):
        Profile.from_section({"terms": {"GRPO": -1}})
    assert Profile.from_section({"tags": ["a"], "liked": {"2503.14476": 2}}).liked == {"2503.14476": 2.0}
    with pytest.raises(ConfigError, match="tls"):
        DeliveryConfig.from_section({"email": {"host": "h", "tls": "yes"}}, environ={})
    with pytest.raises(ConfigError, match="from ="):
        DeliveryConfig.from_section({"email": {"host": "h", "to": ["a@b.c"]}}, environ={})
    env = {
        "RADAR_SMTP_HOST": "mail.lab",
        "RADAR_SMTP_PORT": "2525",
        "RADAR_SMTP_TO": "a@lab, b@lab",
        "RADAR_SMTP_FROM": "r@lab",
        "RADAR_WEBHOOK_URL": "https://hooks.example/x",
    }
    cfg = DeliveryConfig.from_section({}, environ=env)
    assert cfg.email.host == "mail.lab" and cfg.email.port == 2525 and cfg.email.to == ("a@lab", "b@lab")
    assert cfg.webhook.url == "https://hooks.example/x" and cfg.any_channel


def test_extractive_summary_keeps_sentences_in_order() -> None:
    text = (
        "We study GRPO for reasoning. Weather was nice. GRPO variance grows with group size in reasoning "
        "tasks. We propose a fix for GRPO variance. Unrelated closing remark."
    )
    summary = ExtractiveSummarizer(2).summarize("Variance of GRPO", text)
    picked = [s for s in text.split(". ") if s.rstrip(".") in summary]
    assert len(picked) == 2 and "Weather" not in summary and "Unrelated" not in summary
    assert text.index(picked[0]) < text.index(picked[1])


def test_endpoint_summarizer_falls_back_after_a_timeout() -> None:
    from tests.report_servers import free_port

    s = EndpointSummarizer(f"http://127.0.0.1:{free_port()}/v1", "m", timeout_s=0.5)
    out = s.summarize("T", "First sentence. Second one.")
    assert out == "First sentence. Second one." and s.failures == 1 and s.broken
    s.summarize("T", "Again.")
    assert s.calls == 1  # not called again after a failure


def test_recommendation_rules_name_themselves() -> None:
    """Each rule on evidence alone; a preset's existence never reproduces, a toy run never adopts, and code, volume
    and relevance together (the old "established") do not adopt either: only a finished reproduction does."""
    presets = preset_patterns(wiring.repro_presets())
    assert match_preset("Dr. GRPO", presets) == "dr_grpo" and match_preset("dapo", presets) == "dapo"
    assert match_preset("GRPO", presets) == "" and match_preset("FooPO", presets) == ""
    assert presets["dr_grpo"].search("we compare with Dr GRPO and DAPO")
    base = {"method": "DAPO", "origin": "preset", "recent_count": 3, "count": 12, "trailing_weeks": 4}
    preset = {**base, "preset": "dapo", "focus": True, "preset_knobs": "built-in preset; TRL GRPOConfig epsilon_high"}
    better, worse = _summary("better", "evidence", adoptable=True), _summary("worse", "evidence")
    toy = _summary("better", "pipeline check")  # a toy run's "better" never adopts
    rising = {"rising": True, "trailing_count": 1, "growth": 6.1, "p_value": 0.002}
    cases = [
        (Evidence(**preset, run=better), "adopt", "repro-better"),
        (Evidence(**preset, run=worse), "watch", "repro-worse"),
        (Evidence(**preset, run=toy), "watch", "in-use"),
        (Evidence(**preset), "watch", "in-use"),  # a preset and papers naming it, nothing rising: not reproduce
        (Evidence(**preset, **rising), "reproduce", "reproduce-focus"),
        (Evidence(**preset, compared_count=2), "reproduce", "reproduce-focus"),
        (Evidence(**{**preset, "focus": False}, **rising), "evaluate", "rising-adoption"),  # outside the focus
        (Evidence(**base, **rising), "evaluate", "rising-adoption"),
        (Evidence(**base, compared_count=3), "evaluate", "used-as-baseline"),
        (Evidence(**base, new=True, introduced_by={"id": "2509.00001"}), "watch", "new"),
        (Evidence(**base, relevance=0.9, code_links=["https://github.com/x/y"], growth=3.0), "watch", "in-use"),
    ]
    for evidence, action, rule in cases:
        rec = decide(evidence)
        assert (rec.action, rec.rule) == (action, rule), evidence
        assert rec.reason and rec.rule in RULES
    reproduce = decide(cases[4][0]).reason
    assert "`radar repro run --method dapo`" in reproduce and "epsilon_high" in reproduce and "rises" in reproduce
    assert "2 of this period's papers compare against it" in decide(cases[5][0]).reason
    assert "5 seed pairs" in decide(cases[0][0]).reason and "A/A" in decide(cases[0][0]).reason
    assert "2509.00001" in decide(cases[9][0]).reason


def _summary(verdict: str, evidence: str, adoptable: bool = False):  # type: ignore[no-untyped-def]
    from radar.reports.runs import RunSummary

    return RunSummary(
        id="r1",
        method="dapo",
        baseline="grpo",
        task="math",
        setup="checkpoint qwen2.5-0.5b, 494.0M parameters, data gsm8k.jsonl, 100 steps, 5 seed pairs",
        evidence_class=evidence,
        verdict=verdict,
        overall=verdict,
        adoptable=adoptable,
        adoption="better with evidence, A/A r0 calibrated" if adoptable else "pipeline check: a toy task",
        summary="",
        claim_status="holds",
        seed_noise=0.02,
        mde=0.03,
        finished_at="2024-02-14T00:00:00Z",
        folder="/tmp/r1",
    )


def test_md_escape_neutralises_markup() -> None:
    out = md_escape(EVIL)
    assert "<" not in out and ">" not in out and "](" not in out.replace("\\](", "")
    assert "&lt;script&gt;" in out and "\\*GRPO\\*" in out


def test_content_counts_agree_with_the_store(report_ws: Workspace) -> None:
    period = parse_week(WEEK)
    cfg = ReportConfig(top_n=3)
    profile = Profile(tags={"rl-policy-optimization": 1.0}, terms={"reinforcement learning": 1.0})
    with report_ws.store() as store:
        content = gather_content(report_ws, store, period, cfg, profile, trends=TRENDS)
        in_week = Documents(store).matching(since=period.since, until=period.until)
        papers = Documents(store).matching(since=period.since, until=period.until, kinds=["paper"])
        tagged = Tags(store).of(in_week)
        earlier = [len(Documents(store).matching(since=p.since, until=p.until)) for p in period.trailing(4)]
    h = content["headline"]
    assert (h["documents"], h["papers"], h["posts"]) == (len(in_week), len(papers), 1)
    assert h["tagged"] == len(tagged) and h["trailing_mean"] == pytest.approx(sum(earlier) / 4, abs=0.05)
    assert h["series"][-1] == {"period": WEEK, "count": len(in_week)}
    volume = {t["tag"]: t for t in content["tag_volume"]}
    for tag in TAG_RULES:
        assert volume[tag]["count"] == sum(tag in tags for tags in tagged.values())
        assert volume[tag]["series"][-1]["count"] == volume[tag]["count"]
    # top papers: per tag, only papers of the week carrying that tag, best first, each with a summary
    for section in content["top_papers"]:
        assert 1 <= len(section["papers"]) <= 3
        scores = [p["score"] for p in section["papers"]]
        assert scores == sorted(scores, reverse=True)
        for p in section["papers"]:
            assert p["id"] in papers and section["tag"] in tagged[p["id"]] and p["summary"]
            assert period.since <= entered(p["id"], p["published"]) <= period.until
    top = content["top_overall"][0]
    assert top["relevance"] > 0 and any(w.startswith(("tag ", "term ")) for w in top["why"])
    assert [p["id"] for p in content["posts"]] == ["post:evil0000000000"]
    assert {r["rule"] for r in content["recommendations"]} <= set(RULES)


def store_mentions(ws: Workspace, period, word: str) -> list[str]:  # type: ignore[no-untyped-def]
    pat = re.compile(rf"(?<![A-Za-z0-9]){word}(?![A-Za-z0-9])")
    with ws.store() as store:
        return [
            d.id
            for d in Documents(store).scan(since=period.since, until=period.until)
            if pat.search(d.title + " " + d.abstract)
        ]


def test_rendered_report_has_every_section_and_escapes_feed_text(report_ws: Workspace) -> None:
    period = parse_week(WEEK)
    with report_ws.store() as store:
        content = gather_content(report_ws, store, period, ReportConfig(), Profile(), trends=TRENDS)
    html, md = render(content, "html"), render(content, "md")
    for section in ("Headline", "Recommendations", "Trends", "Top papers", "Posts and news"):
        assert f"## {section}" in md
        assert f">{section}" in html
    assert "<script>" not in html and "<img src=x" not in html and 'href="javascript' not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<script>" not in md and "<img" not in md and "&lt;script&gt;alert(1)&lt;/script&gt;" in md
    assert "[click](javascript" not in md
    assert html.count("<svg") >= len(TAG_RULES) + 1  # a chart per tag and the headline chart
    assert f"**{content['headline']['documents']} documents**" in md
    for section in content["top_papers"]:
        assert f"### {md_escape(section['tag'])}" in md


def test_email_html_carries_png_charts_by_cid_with_the_numbers_in_alt(report_ws: Workspace) -> None:
    import io

    from PIL import Image

    period = parse_week(WEEK)
    with report_ws.store() as store:
        content = gather_content(report_ws, store, period, ReportConfig(), Profile(), trends=TRENDS)
    html, charts = render_email_html(content)
    assert "<svg" not in html and "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    imgs = re.findall(r'<img src="cid:([^"]+)" width="(\d+)" height="(\d+)" alt="([^"]*)"', html)
    assert len(imgs) == len(content["tag_volume"]) + 1 >= len(TAG_RULES) + 1  # headline and one per tag
    by_cid = {c.cid: c for c in charts}
    assert {cid for cid, *_ in imgs} == set(by_cid)  # every referenced image is attached, and nothing else
    for cid, w, h, _ in imgs:
        image = Image.open(io.BytesIO(by_cid[cid].png))
        assert image.format == "PNG" and image.size == (2 * int(w), 2 * int(h))  # drawn at 2x for phones
    series = content["headline"]["series"]
    expected = ", ".join(f"{s['period']} {s['count']}" for s in series)
    assert imgs[0][3] == f"documents per period: {expected}"
    # the last bar (this period) is drawn in the accent colour, an empty week as a pale sliver
    first = Image.open(io.BytesIO(by_cid[imgs[0][0]].png)).convert("RGB")
    assert first.getpixel((first.width - 3, first.height - 2)) == (0x25, 0x63, 0xEB)
    assert sum(c.png.__len__() for c in charts) < 40_000, [len(c.png) for c in charts]
    # the folder page keeps its inline SVG charts
    assert render(content, "html").count("<svg") == len(imgs)


def test_chart_alt_text_is_escaped() -> None:
    sink = ChartSink()
    tag = str(sink.img([1, 0, 3], 60, 20, ["a", "b", EVIL], EVIL + " per period"))
    assert "<script>" not in tag and tag.count("<") == 1 and "&lt;script&gt;" in tag
    assert tag.endswith('">') and "b 0, " in tag and len(sink.charts) == 1
    sink.img([1, 0, 3], 60, 20, None, "same numbers")  # identical chart: one image, shared
    assert len(sink.charts) == 1


def test_commented_defaults_in_radar_toml_are_valid_when_uncommented() -> None:
    import tomllib

    from radar.store.config import DEFAULT_CONFIG_TEXT

    block = DEFAULT_CONFIG_TEXT[DEFAULT_CONFIG_TEXT.index("# [report]:") : DEFAULT_CONFIG_TEXT.index("# Sources.")]
    lines = [ln[2:] for ln in block.splitlines() if re.match(r"# (\[[a-z.]+\]$|[a-z_]+ = )", ln)]
    data = tomllib.loads("\n".join(lines))
    assert {"report", "profile", "delivery"} <= set(data)
    cfg = ReportConfig.from_section(data["report"])
    assert cfg.summary_endpoint and cfg.formats == ("md", "html")
    assert Profile.from_section(data["profile"]).tags["rl-policy-optimization"] == 2.0
    delivery = DeliveryConfig.from_section(data["delivery"], environ={})
    assert delivery.email.tls == "starttls" and delivery.email.sender == "radar@example.org"


def test_md_escape_property() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=300, deadline=None)
    @given(st.text(alphabet=st.sampled_from(list("ab <>&[]()*_`|#\\!:/\n")) | st.characters(), max_size=80))
    def check(text: str) -> None:
        out = md_escape(text)
        assert "<" not in out and ">" not in out and "\n" not in out
        # every Markdown special is escaped: removing the escapes leaves none bare
        bare = re.sub(r"\\[\\`*_\[\]|#]", "", out)
        assert not re.search(r"[`*_\[\]|#]", bare)

    check()


def test_finished_reproduction_shows_its_verdict_and_drives_the_rule(tmp_path: Path) -> None:
    ws, _ = Workspace.init(tmp_path / "ws")
    paper = Document(
        id="2402.11111",
        kind="paper",
        source="test",
        title="Scaling DAPO to long reasoning",
        abstract="We train with DAPO and clip-higher. Code: https://github.com/lab/dapo-long.",
        published="2024-02-14T00:00:00Z",
        url="https://arxiv.org/abs/2402.11111",
    )
    test = {"test": "paired t", "n": 5, "effect": 0.05, "interval": [0.02, 0.08], "p": 0.004, "p_adjusted": 0.008}
    verdict = {
        "overall": "better",
        "summary": "dapo vs grpo over 5 paired seed(s): ... -> better.",
        "metrics": {"heldout_greedy": test | {"label": "better"}},  # a calibrated verdict (paired, Holm)
    }
    with ws.store() as store:
        Documents(store).upsert([paper])
        Runs(store).create_run(
            "r-dapo-1", "repro", {"method": "dapo", "baseline": "grpo", "task": "arith"}, status="done"
        )
        Runs(store).update_run(
            "r-dapo-1", result={"verdict": verdict, "folder": str(ws.run_dir("r-dapo-1"))}, finished_at=utc_now()
        )
        Runs(store).create_run("r-gspo-2", "repro", {"method": "gspo"}, status="running")  # not finished: not shown
        content = gather_content(
            ws, store, parse_week(WEEK), ReportConfig(), Profile(terms={"DAPO": 1.0}), trends=TRENDS
        )
    assert [r["id"] for r in content["runs"]] == ["r-dapo-1"] and content["runs"][0]["verdict"] == "better"
    assert content["runs"][0]["evidence_class"] == "unclassified" and not content["runs"][0]["adoptable"]
    rec = {r["method"]: r for r in content["recommendations"]}["DAPO"]
    # an older record without a class of evidence (nor an A/A run) never drives an "adopt"
    assert rec["rule"] != "repro-better" and rec["evidence"]["run"]["id"] == "r-dapo-1"
    # the code link in that abstract is this paper's repository, not DAPO's: DAPO's own paper is not stored
    assert rec["evidence"]["preset"] == "dapo" and rec["evidence"]["code_links"] == []
    assert rec["evidence"]["recent_count"] == 1 and [p["id"] for p in rec["evidence"]["papers"]] == ["2402.11111"]
    html, md = render(content, "html"), render(content, "md")
    assert "Reproduction runs" in html and "r-dapo-1" in html and "file://" in html
    assert "## Reproduction runs" in md and "**better**" in md
    # report.json read back (a delivery retried from it) holds the runs as RunSummary, written back unchanged
    from radar.reports.result import ReportContent
    from radar.reports.runs import RunSummary

    again = ReportContent.read(json.loads(json.dumps(content)))
    assert isinstance(again.runs[0], RunSummary) and again.runs[0].id == "r-dapo-1"
    assert json.dumps(again.document(), sort_keys=True) == json.dumps(content, sort_keys=True)


def test_a_run_of_an_older_report_json_reads_back_and_a_malformed_one_is_refused() -> None:
    from radar.reports.runs import read_runs, runs_json

    full = _summary("better", "evidence", adoptable=True)
    (written,) = runs_json([full])
    assert list(written) == [*full.__dataclass_fields__, "line"] and written["line"] == full.line
    assert read_runs(json.loads(json.dumps([written]))) == [full]
    older = {"id": "r0", "method": "dapo", "baseline": "grpo", "verdict": "better", "line": "stale"}  # fewer fields
    (read,) = read_runs([older | {"summary": None, "mde": None}])
    assert (read.verdict, read.adoption, read.adoptable, read.mde, read.summary) == ("better", "", False, None, "")
    assert read.line == "dapo vs grpo (): , better"  # recomputed from the fields, not the stale text
    assert list(runs_json([read])[0]) == list(written)  # written back whole: every field, its default included
    assert read_runs(None) == []
    for bad in ([{"method": "dapo"}], [{"id": ""}], ["r0"], {"id": "r0"}):
        with pytest.raises(ValueError, match="not a list of objects with an id"):
            read_runs(bad)
    with pytest.raises(ValueError, match=r"a run in report.json does not read \(Expected `bool`.*adoptable"):
        read_runs([{"id": "r0", "adoptable": "maybe"}])


def test_an_older_report_json_reads_back_and_a_damaged_one_is_refused(report_ws: Workspace, tmp_path: Path) -> None:
    """A report.json written before summary, elsewhere, new_this_week and calls existed, its recommendations'
    evidence without the fields added since (and with one a later version added), a run with fewer fields and a
    section a later version added: it reads back (its records by msgspec, types checked), renders, and is written
    back as read; a malformed record is no report."""
    from radar.reports.build import load_report
    from radar.reports.calls import CallsSection
    from radar.reports.new_this_week import NewThisWeek
    from radar.reports.result import ReportContent

    profile = Profile(tags={"rl-policy-optimization": 1.0, "llm-reasoning": 1.0}, terms={"GRPO": 1.0})
    with report_ws.store() as store:
        content = gather_content(report_ws, store, parse_week(WEEK), ReportConfig(top_n=3), profile, trends=TRENDS)
    assert content["recommendations"] and content["top_overall"]
    old = {k: v for k, v in content.items() if k not in ("summary", "elsewhere", "new_this_week", "calls")}
    first = {"method", "origin", "papers", "count", "recent_count", "preset"}  # the evidence of the first version
    old["recommendations"] = [
        r | {"evidence": {k: v for k, v in r["evidence"].items() if k in first} | {"later": [1]}}
        for r in content["recommendations"]
    ]
    old["runs"] = [{"id": "r0", "method": "dapo", "baseline": "grpo", "verdict": "better"}]
    old["notes"] = {k: v for k, v in content["notes"].items() if k != "topics"}  # before the topics' note
    old["tag_volume"] = [{k: v for k, v in t.items() if k not in ("trend", "change")} for t in content["tag_volume"]]
    old["later_section"] = {"rows": [1, 2]}
    # the trends before their windows and the names' own lists: their rows the trends' records
    gone = ("start", "baseline_start", "tags_baseline", "new_models", "new_benchmarks")
    old["trends"] = {k: v for k, v in content["trends"].items() if k not in gone}
    read = ReportContent.read(json.loads(json.dumps(old)))
    assert (read.trends.start, read.trends.new_models) == ("", []) and read.trends.emerging[0].term.startswith("<img")
    assert msgspec.to_builtins(read.trends.emerging) == content["trends"]["emerging"]
    assert (read.summary, read.elsewhere, read.new_this_week, read.calls) == ([], [], NewThisWeek(), CallsSection())
    rec = read.recommendations[0]
    assert rec.method == content["recommendations"][0]["method"] and rec.evidence.adopted == []
    assert (read.runs[0].verdict, read.runs[0].adoptable) == ("better", False)
    assert read.top_overall[0].id == content["top_overall"][0]["id"]  # the rows typed
    assert read.notes.topics == "" and read.tag_volume[0].change == "" and read.headline.documents > 0
    doc = read.document()
    assert doc["later_section"] == {"rows": [1, 2]} and doc["top_overall"] == content["top_overall"]
    assert "## Headline" in render(doc, "md")
    folder = tmp_path / WEEK
    folder.mkdir()
    (folder / "report.json").write_text(json.dumps(old), encoding="utf-8")
    built = load_report(folder)
    assert built is not None and built.content.document()["headline"] == content["headline"]
    # a record of the wrong shape is no report (one line naming what is wrong), as a section missing is
    paper = content["top_overall"][0] | {"score": "high"}
    with pytest.raises(ValueError, match=r"report.json: Expected `float`, got `str` - at `\$\[0\]\.score`"):
        ReportContent.read(old | {"top_overall": [paper]})
    term = content["trends"]["emerging"][0] | {"recent_count": "many"}
    with pytest.raises(ValueError, match=r"Expected `int`, got `str` - at `\$\.emerging\[0\]\.recent_count`"):
        ReportContent.read(old | {"trends": old["trends"] | {"emerging": [term]}})
    with pytest.raises(ValueError, match="report.json lacks headline"):
        ReportContent.read({k: v for k, v in old.items() if k != "headline"})
    (folder / "report.json").write_text(json.dumps(old | {"recommendations": [{"method": "x"}]}), encoding="utf-8")
    assert load_report(folder) is None


def test_ranking_uses_profile_weights_tag_confidence_terms_and_likes() -> None:
    from radar.reports.ranking import rank

    def doc(i: str, title: str, abstract: str, day: str = "2024-02-14") -> Document:
        return Document(id=i, kind="paper", source="t", title=title, abstract=abstract, published=f"{day}T00:00:00Z")

    docs = [
        doc("a", "Sure GRPO", "policy optimization for reasoning"),
        doc("b", "Unsure GRPO", "policy optimization for reasoning"),
        doc("c", "Kernels", "fused attention kernels in Triton"),
        doc("d", "Speculative decoding", "draft models verify tokens", day="2024-02-18"),
    ]
    tags = {"a": {"rl": 0.95}, "b": {"rl": 0.3}, "c": {"kern": 1.0}}
    liked = [doc("x", "Speculative decoding survey", "draft models and verify tokens quickly", day="2023-01-01")]
    profile = Profile(tags={"rl": 2.0, "kern": 1.0}, terms={"Triton": 1.0}, liked={"x": 1.0})
    ranked = {
        r.doc.id: r for r in rank(docs, tags, period=parse_week(WEEK), profile=profile, cfg=ReportConfig(), liked=liked)
    }
    assert ranked["a"].relevance > ranked["b"].relevance  # the tagger's confidence counts
    assert "term 'Triton'" in ranked["c"].why and "tag kern" in ranked["c"].why
    assert any(w.startswith("like x") for w in ranked["d"].why) and ranked["d"].recency == 1.0
    assert ranked["a"].recency == pytest.approx(2 / 6)
    empty = rank(docs, {}, period=parse_week(WEEK), profile=Profile(), cfg=ReportConfig())
    assert all(r.relevance == 0.0 for r in empty) and empty[0].doc.id == "d"  # novelty ties, recency decides


def test_report_opens_with_a_summary_lists_each_paper_once_and_shows_no_latex(report_ws: Workspace) -> None:
    period = parse_week(WEEK)
    profile = Profile(tags={"rl-policy-optimization": 1.0, "llm-reasoning": 1.0}, terms={"GRPO": 1.0})
    with report_ws.store() as store:
        content = gather_content(report_ws, store, period, ReportConfig(top_n=3), profile, trends=TRENDS)
    assert 1 <= len(content["summary"]) <= 5
    assert any(b["link"].startswith("http") for b in content["summary"])  # bullets carry their evidence
    md, html = render(content, "md"), render(content, "html")
    assert md.index("## This week in brief") < md.index("## Headline")
    assert html.index(">This week in brief") < html.index(">Headline")
    shown = [p["id"] for p in content["top_overall"]] + [p["id"] for s in content["top_papers"] for p in s["papers"]]
    assert shown and len(shown) == len(set(shown))  # each paper once, its tags listed beside it
    assert any(p["tags"] for p in content["top_overall"])
    papers_md = md.split("## Top papers", 1)[1]
    for p in content["top_overall"]:
        line = papers_md.split(f"({p['id']}, ", 1)[1].split("\n", 1)[0]
        assert all(t in line for t in p["tags"])


def test_latex_reaches_the_reader_as_text() -> None:
    from radar.reports.text import plain

    assert plain(r"\textbf{Psy-CoT} beats \emph{CoT} by 5\% on $\mathcal{O}(n)$ tasks") == (
        "Psy-CoT beats CoT by 5% on 𝒪(n) tasks"
    )
    assert plain("50% fewer tokens & R&D") == "50% fewer tokens & R&D"  # no markup: unchanged
    assert plain(r"we cut 50% of \textit{steps} in C#") == "we cut 50% of steps in C#"  # literal %, # kept
    assert plain(r"broken \textbf{brace") == "broken brace"


def test_new_names_are_split_by_kind_in_the_report(report_ws: Workspace) -> None:
    """Only methods and systems are new methods (and recommendations); models and benchmarks get their own lines."""
    period = parse_week(WEEK)
    named = [
        {**m, "name": name, "kind": kind}
        for m in TRENDS["new_methods"][:1]
        for name, kind in (("ZORPO", "method"), ("Qwen9.9", "model"), ("MegaBench-X", "benchmark"))
    ]
    profile = Profile(terms={"ZORPO": 1.0, "Qwen9.9": 1.0, "MegaBench-X": 1.0})
    with report_ws.store() as store:
        content = gather_content(
            report_ws, store, period, ReportConfig(), profile, trends={**TRENDS, "new_methods": named}
        )
    kinds = {m["name"]: m["kind"] for m in content["trends"]["new_methods"]}
    assert kinds == {"ZORPO": "method"}
    assert [m["name"] for m in content["trends"]["new_models"]] == ["Qwen9.9"]
    assert [m["name"] for m in content["trends"]["new_benchmarks"]] == ["MegaBench-X"]
    assert all(r["method"] not in ("Qwen9.9", "MegaBench-X") for r in content["recommendations"])


def test_a_topic_is_on_the_profile_when_most_of_its_nearest_members_are(report_ws: Workspace) -> None:
    """One profile-tagged paper among a topic's three examples is not enough (the demo's "clinical / medical /
    patient" topic passed that way, through one RL paper on radiology reports): most of the members nearest
    its centroid must carry a profile tag."""
    from radar.reports.content import _topic_is_relevant

    profile = Profile(tags={"inference-serving": 1.0})
    with report_ws.store() as store:
        ids = [d.id for d in Documents(store).scan(kind="paper")]
        tags = Tags(store).of(ids)
        on = [i for i in ids if "inference-serving" in tags.get(i, {})][:12]
        off = [i for i in ids if not tags.get(i)][:12]
        assert len(on) >= 10 and len(off) >= 10

        def topic(sample: list[str]) -> Topic:
            return trend_rows.topic(example_ids=sample[:3], keywords=["patient"], sample_ids=sample)

        assert not _topic_is_relevant(store, profile, topic([on[0], *off[:9]]))  # 1 of 10
        assert _topic_is_relevant(store, profile, topic([*on[:6], *off[:4]]))  # 6 of 10
        assert not _topic_is_relevant(store, Profile(), topic([*on[:6], *off[:4]]))  # no profile tags, no terms
        with_terms = Profile(terms={"patient": 1.0})
        assert _topic_is_relevant(store, with_terms, topic(off[:10]))  # the profile's term is in its words


def test_latex_leftovers_and_our_code_spans() -> None:
    """What pylatexenc alone left: a doubled backslash (\\\\textit{prosody}, 2509.18531), bare braces ({entropy
    collapse}, 2509.22611), markup it cannot parse; our backticks render as code, feed text around them escaped."""
    from radar.reports.render import md_escape
    from radar.reports.text import html_code, md_code, plain

    assert plain(r"a verifiable reward for \\textit{prosody}, GRPO") == "a verifiable reward for prosody, GRPO"
    assert plain("oscillates between {entropy collapse} and {entropy explosion}") == (
        "oscillates between entropy collapse and entropy explosion"
    )
    assert plain(r"broken \textbf{bold {x} and \emph{y") == "broken bold x and y"  # unbalanced: the fallback
    assert plain("50% of R&D, no markup") == "50% of R&D, no markup"
    reason = "a preset exists: `radar repro run --method dapo` <b>"
    assert html_code(reason) == "a preset exists: <code>radar repro run --method dapo</code> &lt;b&gt;"
    assert md_code(reason, md_escape) == "a preset exists: `radar repro run --method dapo` &lt;b&gt;"


def test_a_paper_lands_in_the_section_of_its_contribution() -> None:
    """reports.sections: the contributions' area when the seam gives one; else the best tag if the tagger is more
    likely than not, and an application field (speech, physics, medicine ...) makes it "elsewhere"."""
    from radar.reports.sections import place

    def paper(doc_id: str, title: str, categories: tuple[str, ...] = ("cs.LG",)) -> Document:
        return Document(doc_id, "paper", "arxiv", title, "", "2025-09-24T00:00:00Z", categories=categories)

    sections = {  # tag -> its taxonomy group
        "rl-policy-optimization": "rl-post-training",
        "distributed-training": "hardware-systems",
        "preference-optimization": "rl-post-training",
    }
    rl = paper("1", "No Prompt Left Behind: Zero-Variance Prompts in LLM RL")
    assert place(rl, {"distributed-training": 0.14, "rl-policy-optimization": 0.91}, sections, None).section == (
        "rl-policy-optimization"
    )
    tts = paper("2", "Preference-Guided Prosody Learning in TTS", ("eess.AS", "cs.CL"))
    assert place(tts, {"preference-optimization": 0.87}, sections, None).elsewhere == "eess.AS"
    clinical = paper("3", "Reward Modeling for Diagnostic Reasoning")
    assert place(clinical, {"preference-optimization": 0.64}, sections, None).elsewhere == "diagnostic"
    unsure = place(paper("4", "Something"), {"preference-optimization": 0.3}, sections, None)
    assert unsure.section is None and not unsure.elsewhere
    # the seam: the contribution's area routes a paper among the lab's sections (its best tag of that group), the
    # application field still sends it elsewhere, and an area outside the lab's (unreliable alone) leaves the tags
    area = {"1": "hardware-systems", "2": "rl-post-training", "3": "other", "4": "rl-post-training"}.get
    routed = {"distributed-training": 0.55, "rl-policy-optimization": 0.91}
    assert place(rl, routed, sections, area).section == "distributed-training"  # what the tags alone would not say
    assert place(rl, routed, sections, None).section == "rl-policy-optimization"
    assert place(tts, {"preference-optimization": 0.87}, sections, area).elsewhere == "eess.AS"
    assert place(clinical, {"preference-optimization": 0.64}, sections, area).elsewhere == "diagnostic"  # fallback
    assert place(paper("4", "Something"), {"preference-optimization": 0.3}, sections, area).section is None
    assert place(paper("4", "Something"), {"llm-reasoning": 0.8, "preference-optimization": 0.3},
                 {**sections, "llm-reasoning": "other"}, area).section == "preference-optimization"  # fmt: skip
