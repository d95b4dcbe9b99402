"""Gather what a report says about one period, as plain data (rendered by render.py, saved as JSON).

Counts come from the store (so they agree with `radar stats` and `radar search --since/--until`);
emerging and declining terms, new methods and topics come from the trends (analysis.trends'
``TrendsResult``); ranking, summaries and recommendations are computed here. Everything else (the
taxonomy's groups, the run records, the reproduction presets, the summarizer) is handed in by the
composition root (app.steps).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from typing import Any

from radar.analysis.trends.result import TrendsResult
from radar.reports.config import Profile, ReportConfig
from radar.reports.period import Period
from radar.reports.ranking import Ranked, rank, term_pattern
from radar.reports.recommend import (
    ACTIONS,
    Evidence,
    Presets,
    Recommendation,
    code_links,
    decide,
    match_preset,
    paper_ref,
    preset_name,
    preset_patterns,
)
from radar.reports.result import Bullet, ReportContent
from radar.reports.runs import RunSummary, finished_runs  # noqa: F401  (finished_runs: re-exported)
from radar.reports.summarize import Summarizer
from radar.reports.text import plain
from radar.store import Store
from radar.store.models import Document, utc_now

GROUP_ORDER = ("rl-post-training", "hardware-systems", "other")
MAX_NEW_METHODS = 30  # new methods from the trends considered for recommendations
MAX_RECOMMENDATIONS = 12


@dataclass
class TagGroups:
    """tag -> its taxonomy group, in the taxonomy's order (the store's other tags last, in "other")."""

    groups: dict[str, str] = field(default_factory=dict)

    def group_of(self, tag: str) -> str:
        return self.groups.get(tag, "other")

    def group_names(self) -> list[str]:
        names = list(dict.fromkeys(self.groups.values()))
        return sorted(names, key=lambda g: (GROUP_ORDER.index(g) if g in GROUP_ORDER else len(GROUP_ORDER), g))


def tag_groups(taxonomy_groups: dict[str, str], store: Store) -> TagGroups:
    """The taxonomy's tag -> group (in its order), plus any other stored tag in "other"."""
    groups = dict(taxonomy_groups)
    for t in store.known_tags():
        groups.setdefault(t, "other")
    return TagGroups(groups)


def effective_profile(profile: Profile, grouping: TagGroups) -> tuple[Profile, str]:
    """The configured profile, or (none configured) the taxonomy's lab groups as the interests."""
    if not profile.empty:
        return profile, "profile from radar.toml [profile]"
    lab = {t: 1.0 for t, g in grouping.groups.items() if g in ("rl-post-training", "hardware-systems")}
    if not lab:
        lab = {t: 1.0 for t in grouping.groups}
    return Profile(tags=lab), "no [profile] in radar.toml: relevance = tags of the lab's groups"


def _pct(now: float, before: float) -> float | None:
    return round(100.0 * (now - before) / before, 1) if before > 0 else None


def _bucket(day: str, periods: list[Period]) -> int:
    d = date.fromisoformat(day)
    for i, p in enumerate(periods):
        if p.start <= d <= p.end:
            return i
    return -1


Volumes = tuple[dict[str, Any], list[dict[str, Any]]]


def _volumes(store: Store, period: Period, grouping: TagGroups, cfg: ReportConfig) -> Volumes:
    """Headline (documents and per-group counts vs the trailing mean) and per-tag series for the charts."""
    n_hist = max(cfg.chart_weeks, cfg.trailing_weeks + 1)
    periods = [*period.trailing(n_hist - 1), period]
    first = periods[0]
    kinds: list[Counter[str]] = [Counter() for _ in periods]
    for day, kind, n in store.counts_by_day(first.since, period.until):
        i = _bucket(day, periods)
        if i >= 0:
            kinds[i][kind] += n
    tag_counts: list[Counter[str]] = [Counter() for _ in periods]
    group_docs: list[dict[str, set[str]]] = [defaultdict(set) for _ in periods]
    for doc_id, day, tag in store.tagged_in(first.since, period.until):
        i = _bucket(day, periods)
        if i >= 0:
            tag_counts[i][tag] += 1
            group_docs[i][grouping.group_of(tag)].add(doc_id)
    k = cfg.trailing_weeks
    trail = range(len(periods) - 1 - k, len(periods) - 1)
    totals = [sum(c.values()) for c in kinds]
    now_total = totals[-1]
    mean_total = sum(totals[i] for i in trail) / k
    groups = []
    for g in grouping.group_names():
        now = len(group_docs[-1].get(g, ()))
        mean = sum(len(group_docs[i].get(g, ())) for i in trail) / k
        groups.append(
            {
                "group": g,
                "count": now,
                "trailing_mean": round(mean, 1),
                "change_pct": _pct(now, mean),
                "share_pct": round(100.0 * now / now_total, 1) if now_total else 0.0,
                "tags": [t for t, gg in grouping.groups.items() if gg == g],
            }
        )
    headline = {
        "documents": now_total,
        "papers": kinds[-1]["paper"],
        "posts": kinds[-1]["post"],
        "trailing_weeks": k,
        "trailing_mean": round(mean_total, 1),
        "change_pct": _pct(now_total, mean_total),
        "tagged": len(set().union(*group_docs[-1].values())) if group_docs[-1] else 0,
        "groups": groups,
        "series": [{"period": p.label, "count": totals[i]} for i, p in enumerate(periods)][-cfg.chart_weeks :],
    }
    tags = []
    for tag in sorted(grouping.groups, key=lambda t: (grouping.group_names().index(grouping.group_of(t)), t)):
        series = [
            {
                "period": p.label,
                "count": tag_counts[i][tag],
                "share": round(tag_counts[i][tag] / totals[i], 4) if totals[i] else 0.0,
            }
            for i, p in enumerate(periods)
        ][-cfg.chart_weeks :]
        now = tag_counts[-1][tag]
        mean = sum(tag_counts[i][tag] for i in trail) / k
        tags.append(
            {
                "tag": tag,
                "group": grouping.group_of(tag),
                "count": now,
                "trailing_mean": round(mean, 1),
                "change_pct": _pct(now, mean),
                "series": series,
            }
        )
    return headline, tags


def _flagged_ids(trends: TrendsResult) -> set[str]:
    ids: set[str] = set()
    for item in [*trends.emerging, *trends.new_methods]:
        ids.update(item["example_ids"])
    return ids


# name -> (recent baseline mentions, all baseline mentions, date introduced), from analysis.names via the app
Adoption = Callable[[str], tuple[int, int, str] | None]


def _adopted(e: Evidence, adoption: Adoption | None) -> Evidence:
    found = adoption(e.method) if adoption else None
    if found is None:
        return e
    recent, total, introduced = found
    return replace(e, recent_baseline_mentions=recent, baseline_mentions=total, introduced=introduced)


METHOD_KINDS = frozenset({"method", "system"})


def method_kinds(profile: Profile, grouping: TagGroups) -> frozenset[str | None]:
    """Kinds of names that are methods to this profile: method and system (hardware too for a profile with
    hardware-group tags); None (a name the kind classifier does not know) stays, for want of evidence."""
    kinds: set[str | None] = {*METHOD_KINDS, None}
    if any(grouping.group_of(t) == "hardware-systems" for t, w in profile.tags.items() if w > 0):
        kinds.add("hardware")
    return frozenset(kinds)


def _relevant_to(store: Store, profile: Profile) -> Callable[[list[str], str], bool]:
    """relevant(example ids, text): whether a trend item concerns the profile: one of its example documents
    carries a profile tag, or the profile's terms occur in its documents or its own words."""
    patterns = [term_pattern(t) for t, w in profile.terms.items() if w > 0]
    wanted = {t for t, w in profile.tags.items() if w > 0}

    def relevant(ids: list[str], text: str) -> bool:
        if wanted and any(wanted & set(tags) for tags in store.tags_of(ids).values()):
            return True
        if not patterns:
            return False
        docs = store.documents(ids).values()
        texts = [text, *(f"{d.title} {d.abstract}" for d in docs)]
        return any(p.search(t) for p in patterns for t in texts)

    return relevant


def _topic_is_relevant(store: Store, profile: Profile, topic: Any) -> bool:
    """A topic concerns the profile when at least half of its members nearest the centroid carry a profile tag (one
    tagged example was enough before: a clinical topic with one RL paper among its examples passed), or when
    the profile's terms occur in its words or examples."""
    wanted = {t for t, w in profile.tags.items() if w > 0}
    sample = topic.get("sample_ids") or topic["example_ids"]
    if wanted and sample:
        tags = store.tags_of(sample)
        if sum(1 for i in sample if wanted & set(tags.get(i, {}))) * 2 >= len(sample):
            return True
    if not profile.terms:
        return False
    return _relevant_to(store, replace(profile, tags={}))(topic["example_ids"], " ".join(topic["keywords"]))


def executive_summary(
    recs: list[Recommendation],
    tag_volume: list[dict[str, Any]],
    profile: Profile,
    top: list[dict[str, Any]],
    topics: list[Any],
    runs: list[dict[str, Any]],
) -> list[Bullet]:
    """At most five bullets, what matters to the profile this period, each with its evidence link."""
    out: list[Bullet] = []
    for rec in [r for r in recs if r.action in ("adopt", "reproduce", "evaluate")][:2]:
        paper = rec.evidence.papers[0] if rec.evidence.papers else None
        out.append(
            {
                "text": f"{rec.action.capitalize()}: {rec.method} ({rec.reason})",
                "link": paper["url"] if paper else "",
                "label": paper["title"] if paper else "",
            }
        )
    mine = [t for t in tag_volume if profile.tags.get(t["tag"], 0) > 0 and t["change_pct"] is not None]
    if mine:
        moved = max(mine, key=lambda t: abs(t["change_pct"]))
        example = next((p for p in top if moved["tag"] in p["tags"]), None)
        word = "up" if moved["change_pct"] >= 0 else "down"
        out.append(
            {
                "text": f"{moved['tag']}: {moved['count']} papers, {word} {abs(moved['change_pct']):.0f}% on the "
                f"trailing mean ({moved['trailing_mean']})",
                "link": example["url"] if example else "",
                "label": example["title"] if example else "",
            }
        )
    if top:
        out.append({"text": "Top paper for the profile", "link": top[0]["url"], "label": top[0]["title"]})
    if topics:
        t = topics[0]
        out.append({"text": f"Growing topic: {t['label']} ({t['recent_size']} recent)", "link": "", "label": ""})
    done = [r for r in runs if r.get("verdict")]
    if done and len(out) < 5:
        run = done[0]
        out.append(
            {
                "text": f"Reproduction {run['line']}",
                "link": "",
                "label": "",
            }
        )
    return out[:5]


def _evidence(
    store: Store,
    period: Period,
    trends: TrendsResult,
    ranked: list[Ranked],
    baseline: list[Document],
    runs: list[RunSummary],
    trailing_weeks: int,
    preset_titles: Presets,
) -> list[Evidence]:
    presets = preset_patterns(preset_titles)
    relevance = {r.doc.id: r.relevance for r in ranked}
    period_docs = [r.doc for r in ranked]
    latest_run: dict[str, RunSummary] = {}
    for run in runs:  # newest first
        latest_run.setdefault(run.method, run)
    found: dict[str, Evidence] = {}

    lowered: dict[str, str] = {}

    def mentions(pattern: re.Pattern[str], docs: list[Document], needle: str = "") -> list[Document]:
        """Documents whose title or abstract matches; ``needle`` (lower case) is a cheap substring prefilter."""
        out = []
        for d in docs:
            if needle:
                text = lowered.get(d.id)
                if text is None:
                    text = lowered[d.id] = (d.title + " " + d.abstract).lower()
                if needle not in text:
                    continue
            if pattern.search(d.title) or pattern.search(d.abstract):
                out.append(d)
        return out

    for item in trends.new_methods[:MAX_NEW_METHODS]:
        name = item["name"].strip()
        if not name:
            continue
        pat = term_pattern(name, exact_case=sum(c.isupper() for c in name) >= 2)
        words = re.findall(r"[a-z0-9]+", name.lower())
        here = mentions(pat, period_docs, max(words, key=len) if words else "")
        if not here:  # named by the trends but absent from this period: nothing to act on this week
            continue
        examples = list(store.documents(item["example_ids"][:10]).values())
        docs = sorted({d.id: d for d in [*here, *examples]}.values(), key=lambda d: d.published, reverse=True)
        rel = [relevance[d.id] for d in docs if d.id in relevance]
        preset = match_preset(name, presets)
        found[preset or name.lower()] = Evidence(
            method=name,
            origin="new method (trends)",
            papers=[paper_ref(d) for d in docs[:6]],
            count=int(item["count"]),
            recent_count=len(here),
            growth=float(item["growth"] or 0.0),
            first_seen=item["first_seen"][:10],
            code_links=code_links(docs)[:5],
            relevance=round(sum(rel) / len(rel), 3) if rel else 0.0,
            preset=preset,
            run=latest_run.get(preset) if preset else None,
        )
    for preset, pat in presets.items():
        if preset in found:
            continue
        needle = max(re.findall(r"[a-z0-9]+", preset_name(preset, preset_titles).lower()), key=len)
        here = mentions(pat, period_docs, needle)
        if not here:
            continue
        before = mentions(pat, baseline, needle)
        rate_before = len(before) / trailing_weeks
        growth = len(here) / rate_before if rate_before else float(len(here))
        rel = [relevance[d.id] for d in here]
        docs = sorted([*here, *before], key=lambda d: d.published, reverse=True)
        found[preset] = Evidence(
            method=preset_name(preset, preset_titles),
            origin="repro preset mentioned",
            papers=[paper_ref(d) for d in docs[:6]],
            count=len(docs),
            recent_count=len(here),
            growth=round(growth, 2),
            code_links=code_links(docs)[:5],
            relevance=round(sum(rel) / len(rel), 3),
            preset=preset,
            run=latest_run.get(preset),
        )
    return list(found.values())


def gather(
    store: Store,
    period: Period,
    cfg: ReportConfig,
    profile: Profile,
    *,
    trends: TrendsResult,
    grouping: TagGroups,
    summarizer: Summarizer,
    runs: list[RunSummary],
    presets: Presets,
    adoption: Adoption | None = None,
) -> ReportContent:
    """Everything the templates show; ``ReportContent.as_dict()`` is report.json."""
    used_profile, profile_note = effective_profile(profile, grouping)

    headline, tag_volume = _volumes(store, period, grouping, cfg)
    direction = {t["tag"]: t for t in trends.tag_trends}  # the trends' rule: significant change in share
    for row in tag_volume:
        found = direction.get(row["tag"])
        row["trend"] = found["direction"] if found else ""
        row["share_now"] = found["recent_share"] if found else None
        row["share_before"] = found["baseline_share"] if found else None
    docs = list(store.iter_documents(since=period.since, until=period.until))
    papers = [d for d in docs if d.kind == "paper"]
    posts = sorted((d for d in docs if d.kind == "post"), key=lambda d: (d.published, d.id), reverse=True)
    tags = store.tag_scores(d.id for d in docs)
    trail_start = period.trailing(cfg.trailing_weeks)[0]
    day_before = (period.start - timedelta(days=1)).isoformat() + "T23:59:59Z"
    baseline = list(store.iter_documents(since=trail_start.since, until=day_before, kind="paper"))
    liked = list(store.documents(used_profile.liked).values())
    ranked = rank(
        papers,
        tags,
        period=period,
        profile=used_profile,
        cfg=cfg,
        baseline=baseline,
        liked=liked,
        flagged_ids=_flagged_ids(trends),
    )

    summaries: dict[str, str] = {}

    def shown(r: Ranked) -> dict[str, Any]:
        if r.doc.id not in summaries:
            summaries[r.doc.id] = summarizer.summarize(plain(r.doc.title), plain(r.doc.abstract))
        r.summary = summaries[r.doc.id]
        return r.as_dict() | {"title": plain(r.doc.title)}

    top_overall = [shown(r) for r in ranked[: cfg.top_n]]
    listed = {p["id"] for p in top_overall}  # each paper appears once: overall, or under its first tag
    by_tag = []
    for tag in sorted(grouping.groups, key=lambda t: (grouping.group_names().index(grouping.group_of(t)), t)):
        best = [r for r in ranked if tag in r.tags and r.doc.id not in listed][: cfg.top_n]
        listed.update(r.doc.id for r in best)
        if best:
            total = sum(1 for r in ranked if tag in r.tags)
            by_tag.append(
                {"tag": tag, "group": grouping.group_of(tag), "count": total, "papers": [shown(r) for r in best]}
            )
    post_items = []
    for d in posts[: cfg.max_posts]:
        post_items.append(
            {
                "id": d.id,
                "title": plain(d.title),
                "url": d.url,
                "published": d.published,
                "source": d.source,
                "summary": summarizer.summarize(plain(d.title), plain(d.abstract)),
            }
        )

    methods_only = replace(
        trends, new_methods=[m for m in trends.new_methods if m.get("kind") in method_kinds(used_profile, grouping)]
    )
    recs: list[Recommendation] = [
        decide(_adopted(e, adoption))
        for e in _evidence(store, period, methods_only, ranked, baseline, runs, cfg.trailing_weeks, presets)
    ]
    recs.sort(key=lambda r: (ACTIONS.index(r.action), -r.evidence.recent_count, r.method.lower()))
    # a method that only rises, with no relevance to the lab's profile (e.g. a radiology model), is noise here
    off_profile = [r.method for r in recs if r.rule == "rising" and r.evidence.relevance <= 0 and not r.evidence.preset]
    recs = [r for r in recs if r.method not in off_profile]
    off_note = (
        (
            f"{len(off_profile)} more flagged method(s) with no relevance to the profile are left out: "
            f"{', '.join(off_profile[:6])}{' ...' if len(off_profile) > 6 else ''}"
        )
        if off_profile
        else ""
    )
    relevant = _relevant_to(store, used_profile)
    topics = sorted(trends.topics, key=lambda t: -(t["growth"] or 0.0))
    growing = [t for t in topics if (t["growth"] or 0) > 0]
    shown_topics = [t for t in growing if _topic_is_relevant(store, used_profile, t)]
    kinds = method_kinds(used_profile, grouping)
    named = [m for m in trends.new_methods if relevant(m["example_ids"], m["name"])]
    new_names = [m for m in named if m.get("kind") in kinds]
    left_out = [t["label"] for t in growing if t not in shown_topics] + [
        m["name"] for m in trends.new_methods if m not in named
    ]
    topics_note = (
        f"left out as unrelated to the profile: {', '.join(left_out[:8])}{' ...' if len(left_out) > 8 else ''}"
        if left_out
        else ""
    )
    summary_note = summarizer.name
    if getattr(summarizer, "failures", 0):
        summary_note = f"extractive (the summary endpoint failed: {summarizer.last_error})"  # type: ignore[attr-defined]
    return ReportContent(
        title=cfg.title,
        period={
            "label": period.label,
            "start": period.start.isoformat(),
            "end": period.end.isoformat(),
            "describe": period.describe(),
        },
        generated_at=utc_now(),
        headline=headline,
        tag_volume=tag_volume,
        trends={
            "as_of": trends.as_of,
            "emerging": trends.emerging[:10],
            "declining": trends.declining[:6],
            "new_methods": new_names[:10],
            "new_models": [m for m in named if m.get("kind") == "model"][:8],
            "new_benchmarks": [m for m in named if m.get("kind") == "benchmark"][:8],
            "topics": shown_topics[:6],
        },
        top_overall=top_overall,
        top_papers=by_tag,
        posts=post_items,
        posts_total=len(posts),
        recommendations=[r.as_dict() for r in recs[:MAX_RECOMMENDATIONS]],
        runs=[r.as_dict() for r in runs[:10]],
        notes={
            "profile": profile_note,
            "summaries": summary_note,
            "off_profile": off_note,
            "tags": "" if store.known_tags() else "no tags yet: run `radar tag` for per-tag sections",
            "ranking": f"score = {cfg.relevance_weight:g} relevance + {cfg.novelty_weight:g} novelty + "
            f"{cfg.recency_weight:g} recency",
            "trends": "",
            "topics": topics_note,
        },
        summary=executive_summary(
            recs, tag_volume, used_profile, top_overall, shown_topics, [r.as_dict() for r in runs]
        ),
    )
