"""The report's "New this week" and its recommendations on a workspace with a known week
(tests/report_evidence_data.py), written by the composition root (app.steps.report): the cards are the week's, every
number in a recommendation's evidence is recomputed here from the store, each link goes to the paper its line
names, and no recommendation rests on a preset's existence alone."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from radar.analysis.contributions.cards import mentions_for
from radar.analysis.contributions.table import Contributions
from radar.analysis.contributions.update import name_key
from radar.app import steps, steps_contributions
from radar.app.context import Radar
from radar.crawler.documents import Documents
from radar.reports.period import parse_week
from radar.reports.recommend import EVALUATE_AT
from radar.reports.text import plain
from radar.store import Workspace
from radar.store.dates import entered
from tests import report_evidence_data as story


@pytest.fixture(scope="module")
def story_ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    ws, _ = Workspace.init(tmp_path_factory.mktemp("evidence") / "ws")
    with ws.store() as store:
        story.build(store)
    return ws


@pytest.fixture(scope="module")
def report(story_ws: Workspace) -> dict[str, Any]:
    built = steps.report(Radar(story_ws), parse_week(story.WEEK))
    return dict(json.loads(Path(built.paths["json"]).read_text()))


def _recs(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["method"]: r for r in report["recommendations"]}


def test_new_this_week_shows_the_weeks_cards(story_ws: Workspace, report: dict[str, Any]) -> None:
    radar = Radar(story_ws)
    with story_ws.store() as store:
        cards = steps_contributions.week(radar, store, story.WEEK)
    section = report["new_this_week"]
    shown = [c["name"] for key in ("cards", "compact", "more", "others") for c in section[key]]
    assert sorted(shown) == sorted(c.name for c in cards) and "ZETAPO" in shown
    assert section["total"] == len(cards) and section["areas"] == ["rl-post-training", "hardware-systems"]
    zeta = next(c for c in section["cards"] if c["name"] == "ZETAPO")
    card = next(c for c in cards if c.name == "ZETAPO")
    assert (zeta["introduced_by"], zeta["kind"], zeta["area"]) == (story.ZETAPO_ID, "method", "rl-post-training")
    assert zeta["changes"] == plain(card.changes) and "zeta-quantile baseline" in zeta["changes"]
    assert (
        zeta["code"] == ["https://github.com/lab/zetapo"] and zeta["url"] == f"https://arxiv.org/abs/{story.ZETAPO_ID}"
    )
    # what it builds on is the card's (the contributions model decides it; its quality is backtest_cards.py's)
    assert zeta["preset"] == "" and zeta["builds_on"] == list(card.builds_on)
    md = Path(story_ws.report_dir(story.WEEK) / "report.md").read_text()
    html = Path(story_ws.report_dir(story.WEEK) / "report.html").read_text()
    assert md.index("## This week in brief") < md.index("## New this week") < md.index("## Headline")
    assert html.index(">New this week<") < html.index(">Headline<")
    line = next(x for x in md.splitlines() if x.startswith("- **ZETAPO**"))
    assert f"[{card.title}](https://arxiv.org/abs/{story.ZETAPO_ID})" in line
    after = md.split(line, 1)[1]
    assert "zeta-quantile baseline" in after.split("\n- **")[0] and "<https://github.com/lab/zetapo>" in after
    assert "no preset" in after.split("\n- **")[0]


def test_card_text_is_escaped_in_both_formats(story_ws: Workspace, report: dict[str, Any]) -> None:
    md = Path(story_ws.report_dir(story.WEEK) / "report.md").read_text()
    html = Path(story_ws.report_dir(story.WEEK) / "report.html").read_text()
    assert "<script>" not in md and "<img" not in md and "](javascript:" not in md.replace("\\]", "")
    assert "<script>alert(1)" not in html and "<img src=x" not in html and 'href="javascript:' not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<bdi>EVILPO</bdi>" in html  # feed text isolated for bidi like the rest of the page
    evil = next(c for c in report["new_this_week"]["cards"] if c["name"] == "EVILPO")
    assert "<script>" in evil["title"]  # report.json keeps the text; only the renderings escape it


def _store_counts(story_ws: Workspace, report: dict[str, Any], rec: dict[str, Any]) -> dict[str, int]:
    """What the store says about a recommendation's name for the report's week, recomputed: the stored papers
    naming it (its mentions, and its own paper), split by the day each entered the record."""
    period = parse_week(report["period"]["label"])
    ev = rec["evidence"]
    with story_ws.store() as store:
        rows = mentions_for(Contributions(store), [(rec["method"], "")]).get(name_key(rec["method"]), [])
        week = set(Documents(store).matching(since=period.since, until=period.until, kinds=["paper"]))
        trail = period.trailing(ev["trailing_weeks"])
        before = set(Documents(store).matching(since=trail[0].since, until=trail[-1].until, kinds=["paper"]))
        intro = Documents(store).get(ev["introduced_by"]["id"]) if ev["introduced_by"] else None
    since = intro.published[:10] if intro is not None else ""
    day = {m.doc_id: entered(m.doc_id, m.published + "T00:00:00Z")[:10] for m in rows if m.published >= since}
    if intro is not None:
        day[intro.id] = entered(intro.id, intro.published)[:10]
    naming = {i for i, d in day.items() if d <= period.end.isoformat()}
    compared = {m.doc_id for m in rows if m.compared}
    return {
        "count": len(naming),
        "recent_count": len(naming & week),
        "compared_count": len(naming & week & compared),
        "trailing_count": len(naming & before),
    }


def test_every_number_in_the_evidence_is_the_stores(story_ws: Workspace, report: dict[str, Any]) -> None:
    recs = report["recommendations"]
    assert {"DAPO", "KAPPAPO", "ZETAPO"} <= {r["method"] for r in recs}
    for rec in recs:
        ev = rec["evidence"]
        assert {k: ev[k] for k in ("count", "recent_count", "compared_count", "trailing_count")} == _store_counts(
            story_ws, report, rec
        ), rec["method"]
    # and the store's mentions are the papers' own text: counted again from the titles and abstracts
    period = parse_week(story.WEEK)
    with story_ws.store() as store:
        docs = list(Documents(store).scan(until=period.until, kind="paper"))
    # (any case, whole tokens; from the introducing paper's day on, when it has one: an earlier paper spelled
    # alike means something else), for single-token names and for a preset's name of two words
    for name in ("DAPO", "KAPPAPO", "ZETAPO", "Dr. GRPO"):
        ev = _recs(report)[name]["evidence"]
        words = r"[\s.]*".join(re.escape(w) for w in name.replace(".", " ").split())
        pattern = re.compile(rf"(?<![A-Za-z0-9]){words}(?![A-Za-z0-9])", re.I)
        since = ev["introduced_by"]["published"][:10] if ev["introduced_by"] else ""
        naming = [d for d in docs if pattern.search(d.title + " " + d.abstract) and d.published[:10] >= since]
        in_week = [d for d in naming if period.since <= entered(d.id, d.published) <= period.until]
        assert ev["count"] == len(naming) and ev["recent_count"] == len(in_week), name
        assert ev["compared_count"] == sum(f"outperforms {name}" in d.abstract for d in in_week), name
    assert _recs(report)["DAPO"]["evidence"]["count"] == 1 + 8 + 3  # its paper, eight before the week, three in it
    assert _recs(report)["Dr. GRPO"]["evidence"]["recent_count"] == 2  # the mentions table keys single tokens only
    assert _recs(report)["ZETAPO"]["evidence"]["count"] == 1  # not the July pose estimator spelled alike


def test_each_link_goes_to_the_paper_its_line_names(story_ws: Workspace, report: dict[str, Any]) -> None:
    with story_ws.store() as store:
        for rec in report["recommendations"]:
            ev = rec["evidence"]
            for ref in [*ev["papers"], *([ev["introduced_by"]] if ev["introduced_by"] else [])]:
                doc = Documents(store).get(ref["id"])
                assert doc is not None and ref["url"] == doc.url and ref["title"] == plain(doc.title), ref
            intro = ev["introduced_by"]
            if intro:  # the introducing paper is the one whose contribution introduces the name (or the preset's)
                row = Contributions(store).contributions([intro["id"]])[intro["id"]]
                assert row.introduces and (name_key(row.name) == name_key(rec["method"]) or ev["preset"])
            own = Documents(store).get(intro["id"]).abstract if intro else ""  # type: ignore[union-attr]
            assert all(link in own for link in ev["code_links"]), rec["method"]  # its own paper's code only
    dapo = _recs(report)["DAPO"]["evidence"]
    assert dapo["introduced_by"]["id"] == story.DAPO_ID and dapo["code_links"] == []
    brief = next(b for b in report["summary"] if b["text"].startswith("Reproduce: DAPO"))
    assert brief["link"] == f"https://arxiv.org/abs/{story.DAPO_ID}" and brief["label"].startswith("DAPO: An Open")


def test_recommendations_follow_evidence_not_presets(report: dict[str, Any]) -> None:
    recs = _recs(report)
    dapo, kappa, zeta, gspo = recs["DAPO"], recs["KAPPAPO"], recs["ZETAPO"], recs["GSPO"]
    assert (dapo["action"], dapo["rule"]) == ("reproduce", "reproduce-focus")
    assert "2 of this period's papers compare against it" in dapo["reason"] and "epsilon_high" in dapo["reason"]
    assert "`radar repro run --method dapo`" in dapo["reason"]
    assert (kappa["action"], kappa["rule"]) == ("evaluate", "rising-adoption") and kappa["evidence"]["rising"]
    assert kappa["evidence"]["recent_count"] == 6 and kappa["evidence"]["trailing_count"] == 1
    # ZETAPO: new this week, a GRPO-family method with its code, scored 0.75 on day 0: below EVALUATE_AT (about four
    # calls a week), so watched as new; the score travels with the evidence
    assert zeta["evidence"]["new"] and 0.5 < zeta["evidence"]["consequence"] < EVALUATE_AT
    assert (zeta["action"], zeta["rule"]) == ("watch", "new")
    # GSPO: a preset, one paper this week, one before: watched, not reproduced on the preset alone
    assert (gspo["action"], gspo["rule"]) == ("watch", "in-use") and gspo["evidence"]["preset"] == "gspo"
    assert all(r["action"] != "adopt" for r in report["recommendations"])  # no finished reproduction
    assert all(r["method"] != "GRPO" for r in report["recommendations"])  # the baseline itself is no candidate


def test_a_method_outside_the_profile_is_left_out_and_said(story_ws: Workspace) -> None:
    """A profile of the hardware group only: the RL methods of the week are not recommended, and said so."""
    radar = Radar(story_ws)
    config = story_ws.root / "radar.toml"
    text = config.read_text(encoding="utf-8")
    config.write_text(text + '\n[profile]\ntags = { "inference-serving" = 1.0 }\n', encoding="utf-8")
    try:
        built = steps.report(Radar(story_ws), parse_week(story.WEEK))
    finally:
        config.write_text(text, encoding="utf-8")
        steps.report(radar, parse_week(story.WEEK))  # the module's report as it was
    content = built.content
    assert not {"DAPO", "KAPPAPO"} & {r.method for r in content.recommendations}
    assert "KAPPAPO" in content.notes.off_profile and "DAPO" in content.notes.off_profile
    assert content.new_this_week.areas == ["hardware-systems"] and not content.new_this_week.cards
    assert "ZETAPO" in [c.name for c in content.new_this_week.others]
