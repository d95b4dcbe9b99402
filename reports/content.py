"""Gather what a report says about one period, as plain data (rendered by render.py, saved as JSON).

Counts come from the store (so they agree with `radar stats` and `radar search --since/--until`);
emerging and declining terms, new methods and topics come from the trends (analysis.trends'
``TrendsResult``); ranking, summaries and recommendations are computed here. Everything else (the
taxonomy's groups, the run records, the reproduction presets, the summarizer) is handed in by the
composition root (app.steps).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

from radar.analysis.contributions.cards import MethodCard
from radar.analysis.trends.result import PeriodTrends, Topic, TrendsResult
from radar.crawler.documents import Documents
from radar.index.tags_table import Tags
from radar.reports.calls import CallsSection, PastWeek, last_calls
from radar.reports.config import Profile, ReportConfig
from radar.reports.evidence import gather_evidence
from radar.reports.new_this_week import NewThisWeek, new_this_week, profile_areas, read_this
from radar.reports.period import Period
from radar.reports.ranking import PaperRow, Ranked, rank, term_pattern
from radar.reports.recommend import ACTIONS, Presets, Recommendation, decide
from radar.reports.result import (
    Bullet,
    ElsewhereRow,
    Notes,
    PeriodInfo,
    PostRow,
    ReportContent,
    ReportTrends,
    TagRow,
    TagSection,
)
from radar.reports.runs import RunSummary
from radar.reports.sections import Area, place
from radar.reports.summarize import EndpointSummarizer, Summarizer
from radar.reports.text import plain
from radar.reports.volume import volumes
from radar.store.dates import entered
from radar.store.models import utc_now
from radar.store.table import Database

GROUP_ORDER = ("rl-post-training", "hardware-systems", "other")
MAX_RECOMMENDATIONS = 12
MAX_WATCH_NEW = 6  # of those, "watch" for a new method of the period (the rest is in "New this week")


@dataclass
class TagGroups:
    """tag -> its taxonomy group, in the taxonomy's order (the store's other tags last, in "other")."""

    groups: dict[str, str] = field(default_factory=dict)

    def group_of(self, tag: str) -> str:
        return self.groups.get(tag, "other")

    def group_names(self) -> list[str]:
        names = list(dict.fromkeys(self.groups.values()))
        return sorted(names, key=lambda g: (GROUP_ORDER.index(g) if g in GROUP_ORDER else len(GROUP_ORDER), g))


def tag_groups(taxonomy_groups: dict[str, str], store: Database) -> TagGroups:
    """The taxonomy's tag -> group (in its order), plus any other stored tag in "other"."""
    groups = dict(taxonomy_groups)
    for t in Tags(store).known():
        groups.setdefault(t, "other")
    return TagGroups(groups)


def effective_profile(profile: Profile, grouping: TagGroups) -> tuple[Profile, str]:
    """The configured profile, or (none configured) the taxonomy's lab groups as the interests."""
    if not profile.empty:
        return profile, "profile from radar.toml [profile]"
    lab = {t: 1.0 for t, g in grouping.groups.items() if g in ("rl-post-training", "hardware-systems")}
    if not lab:
        lab = {t: 1.0 for t in grouping.groups}
    return replace(profile, tags=lab), "no [profile] in radar.toml: relevance = tags of the lab's groups"


def _flagged_ids(trends: TrendsResult) -> set[str]:
    return {i for t in trends.emerging for i in t.example_ids} | {i for m in trends.new_methods for i in m.example_ids}


METHOD_KINDS = frozenset({"method", "system"})


def method_kinds(profile: Profile, grouping: TagGroups) -> frozenset[str | None]:
    """Kinds of names that are methods to this profile: method and system (hardware too for a profile with
    hardware-group tags); None (a name the kind classifier does not know) stays, for want of evidence."""
    kinds: set[str | None] = {*METHOD_KINDS, None}
    if any(grouping.group_of(t) == "hardware-systems" for t, w in profile.tags.items() if w > 0):
        kinds.add("hardware")
    return frozenset(kinds)


def _relevant_to(store: Database, profile: Profile) -> Callable[[list[str], str], bool]:
    """relevant(example ids, text): whether a trend item concerns the profile: one of its example documents
    carries a profile tag, or the profile's terms occur in its documents or its own words."""
    patterns = [term_pattern(t) for t, w in profile.terms.items() if w > 0]
    wanted = {t for t, w in profile.tags.items() if w > 0}

    def relevant(ids: list[str], text: str) -> bool:
        if wanted and any(wanted & set(tags) for tags in Tags(store).of(ids).values()):
            return True
        if not patterns:
            return False
        docs = Documents(store).of(ids).values()
        texts = [text, *(f"{d.title} {d.abstract}" for d in docs)]
        return any(p.search(t) for p in patterns for t in texts)

    return relevant


def _topic_is_relevant(store: Database, profile: Profile, topic: Topic) -> bool:
    """A topic concerns the profile when at least half of its members nearest the centroid carry a profile tag (one
    tagged example was enough before: a clinical topic with one RL paper among its examples passed), or when
    the profile's terms occur in its words or examples."""
    wanted = {t for t, w in profile.tags.items() if w > 0}
    sample = topic.sample_ids or topic.example_ids
    if wanted and sample:
        tags = Tags(store).of(sample)
        if sum(1 for i in sample if wanted & set(tags.get(i, {}))) * 2 >= len(sample):
            return True
    if not profile.terms:
        return False
    return _relevant_to(store, replace(profile, tags={}))(topic.example_ids, " ".join(topic.keywords))


def tag_bullet(tag_volume: list[TagRow], profile: Profile, sections: list[TagSection]) -> Bullet | None:
    """The brief's line on the profile's tags, worded as the table words it (``share_change``): the tag whose
    share changed significantly with the largest |z|, linked to the first paper of its section; when none did,
    that no tag did and the largest move."""
    mine = [t for t in tag_volume if profile.tags.get(t.tag, 0) > 0 and t.z is not None]
    if not mine:
        return None
    moved = [t for t in mine if t.trend in ("rising", "falling")]
    pick = max(moved or mine, key=lambda t: (abs(t.z or 0.0), t.tag))  # z is not None in ``mine``
    first = next((sec.papers[0] for sec in sections if sec.tag == pick.tag and sec.papers), None)
    if moved:
        text = f"{pick.tag}: {pick.count} papers this period, {pick.change}"
        return Bullet(text, first.url if first else "", first.title if first else "")
    return Bullet(
        f"No profile tag's share changed significantly (largest move: {pick.tag}, {pick.count} papers, {pick.change})"
    )


AREA_WORDS = {"rl-post-training": "RL post-training", "hardware-systems": "hardware & systems"}


def _new_bullets(section: NewThisWeek) -> list[Bullet]:
    """One "read this" line per profile area: its first ``READ_THIS`` cards by name, in the section's order,
    linked to the first one's paper."""
    out: list[Bullet] = []
    for area, cards in read_this(section).items():
        names = ", ".join(c.name for c in cards)
        out.append(Bullet(f"Read this, {AREA_WORDS.get(area, area)}: {names}", cards[0].url, cards[0].title))
    return out


def rec_bullet(rec: Recommendation) -> Bullet:
    """A recommendation in the brief, linked to the paper that introduces the method (the paper the line names),
    else to the newest paper of the period naming it, said so."""
    intro = rec.evidence.introduced_by
    other = rec.evidence.papers[0] if rec.evidence.papers else None
    paper, label = (intro, intro.get("title", "")) if intro else (other, f"named in {other['title']}" if other else "")
    return Bullet(f"{rec.action.capitalize()}: {rec.method} ({rec.reason})", paper["url"] if paper else "", label)


def executive_summary(
    recs: list[Recommendation],
    tag_line: Bullet | None,
    top: list[PaperRow],
    topics: list[Topic],
    runs: list[RunSummary],
    new: NewThisWeek | None = None,
) -> list[Bullet]:
    """At most five bullets, what matters to the profile this period, each with its evidence link; every figure in
    them is one the body shows (the new methods are the section's, the tag line is the table's ``change``, the
    topic the first growing topic)."""
    out: list[Bullet] = _new_bullets(new or NewThisWeek())
    for rec in [r for r in recs if r.action in ("adopt", "reproduce", "evaluate")][:2]:
        out.append(rec_bullet(rec))
    if tag_line is not None:
        out.append(tag_line)
    if top:
        out.append(Bullet("Top paper for the profile", top[0].url, top[0].title))
    if topics:
        t = topics[0]
        out.append(Bullet(f"Growing topic: {t.label} ({t.recent_size} recent of {t.size})"))
    done = [r for r in runs if r.verdict]
    if done and len(out) < 5:
        run = done[0]
        out.append(Bullet(f"Reproduction {run.line}"))
    return out[:5]


def order_recommendations(recs: list[Recommendation], order: Mapping[str, int]) -> list[Recommendation]:
    """By action (adopt, reproduce, evaluate, watch); inside an action a method new this period in the cards'
    order (``order``: its paper's position in the week's cards, the lead's reading order), the others by how many
    of the period's papers name it; a "watch" for a new method after the others and at most ``MAX_WATCH_NEW`` of
    those; ``MAX_RECOMMENDATIONS`` in all."""
    last = len(order)

    def key(r: Recommendation) -> tuple[Any, ...]:
        paper = r.evidence.introduced_by.get("id", "")
        new = r.evidence.new and paper in order
        return (ACTIONS.index(r.action), r.rule == "new", not new, order.get(paper, last) if new else 0,
                -r.evidence.recent_count, r.method.lower())  # fmt: skip

    ordered = sorted(recs, key=key)
    watch_new = {id(r) for r in [r for r in ordered if r.rule == "new"][:MAX_WATCH_NEW]}
    return [r for r in ordered if r.rule != "new" or id(r) in watch_new][:MAX_RECOMMENDATIONS]


@dataclass(frozen=True)
class ReportInputs:
    """What one period's report is gathered from besides the store, assembled once by the command (app.steps.report:
    the catalog of reproduction presets resolved once for ``runs``, ``presets``, ``knobs`` and ``preset_papers``)."""

    period: Period
    config: ReportConfig
    profile: Profile
    trends: PeriodTrends  # the tags' change in share from ``trends.tags``, terms, names and topics from ``.terms``
    grouping: TagGroups
    summarizer: Summarizer
    runs: list[RunSummary] = field(default_factory=list)  # the finished reproduction runs
    presets: Presets = field(default_factory=dict)  # reproduction preset -> its title
    cards: Sequence[MethodCard] = ()  # the method cards of the period's papers (what `radar methods --week` lists)
    knobs: Mapping[str, str] = field(default_factory=dict)  # what each preset sets
    preset_papers: Mapping[str, str] = field(default_factory=dict)  # the paper (arXiv id) each preset reproduces
    area_of: Area | None = None  # each paper's contribution area (reports.sections; None: the fallback on its tags)
    past: Sequence[PastWeek] = ()  # the cards of the weeks 4, 8 and 12 before and what their reports flagged


def gather(store: Database, inputs: ReportInputs) -> ReportContent:
    """Everything the templates show; ``ReportContent.document()`` is report.json."""
    period, cfg, trends, grouping, summarizer = (
        inputs.period,
        inputs.config,
        inputs.trends,
        inputs.grouping,
        inputs.summarizer,
    )
    cards, runs, past = inputs.cards, inputs.runs, inputs.past
    used_profile, profile_note = effective_profile(inputs.profile, grouping)
    terms = trends.terms
    headline, tag_volume = volumes(store, period, grouping, cfg, trends.tags)
    docs = list(Documents(store).scan(since=period.since, until=period.until))
    papers = [d for d in docs if d.kind == "paper"]
    posts = sorted((d for d in docs if d.kind == "post"), key=lambda d: (d.published, d.id), reverse=True)
    tags = Tags(store).scores(d.id for d in docs)
    trail_start = period.trailing(cfg.trailing_weeks)[0]
    day_before = (period.start - timedelta(days=1)).isoformat() + "T23:59:59Z"
    baseline = list(Documents(store).scan(since=trail_start.since, until=day_before, kind="paper"))
    liked = list(Documents(store).of(used_profile.liked).values())
    ranked = rank(
        papers,
        tags,
        period=period,
        profile=used_profile,
        cfg=cfg,
        baseline=baseline,
        liked=liked,
        flagged_ids=_flagged_ids(terms),
    )

    summaries: dict[str, str] = {}

    def shown(r: Ranked) -> PaperRow:
        if r.doc.id not in summaries:
            summaries[r.doc.id] = plain(summarizer.summarize(plain(r.doc.title), plain(r.doc.abstract)))
        r.summary = summaries[r.doc.id]
        return PaperRow.of(r, title=plain(r.doc.title))

    # each paper in one place: the section of its contribution's area, or the "elsewhere" line (reports.sections)
    placed = {r.doc.id: place(r.doc, tags.get(r.doc.id, {}), grouping.groups, inputs.area_of) for r in ranked}
    elsewhere = [r for r in ranked if placed[r.doc.id].elsewhere]
    in_lab = [r for r in ranked if not placed[r.doc.id].elsewhere]
    top_overall = [shown(r) for r in in_lab[: cfg.top_n]]
    listed = {p.id for p in top_overall}
    by_tag: list[TagSection] = []
    for tag in sorted(grouping.groups, key=lambda t: (grouping.group_names().index(grouping.group_of(t)), t)):
        here = [r for r in in_lab if placed[r.doc.id].section == tag]
        best = [r for r in here if r.doc.id not in listed][: cfg.top_n]
        if best:
            by_tag.append(
                TagSection(
                    tag=tag,
                    group=grouping.group_of(tag),
                    count=sum(1 for r in ranked if tag in r.tags),  # papers tagged: the table's count
                    in_area=len(here),  # of those, whose contribution is in the area
                    papers=[shown(r) for r in best],
                )
            )
    elsewhere_items = [
        ElsewhereRow(r.doc.id, plain(r.doc.title), r.doc.url, placed[r.doc.id].elsewhere)
        for r in elsewhere
        if r.relevance > 0
    ]
    post_items = []
    for d in posts[: cfg.max_posts]:
        summary = plain(summarizer.summarize(plain(d.title), plain(d.abstract)))
        post_items.append(PostRow(d.id, plain(d.title), d.url, d.published, d.source, summary))

    kinds = method_kinds(used_profile, grouping)
    areas = profile_areas(used_profile, grouping.groups)
    new = new_this_week(
        cards,
        areas,
        {i: d.url for i, d in Documents(store).of([c.introduced_by for c in cards if c.introduced_by]).items()},
    )
    found, off_profile = gather_evidence(
        store,
        period,
        cards=cards,
        areas=areas,
        kinds=kinds,
        trend_names=[m for m in terms.new_methods if m.kind in kinds],
        ranked=ranked,
        baseline=baseline,
        trailing_weeks=cfg.trailing_weeks,
        runs=runs,
        presets=inputs.presets,
        knobs=inputs.knobs,
        preset_papers=inputs.preset_papers,
        frameworks=list(used_profile.frameworks),
        chosen=list(used_profile.chosen),
    )
    # a recent method the period's papers name without a rise is no recommendation (a preset's method is: watch)
    decided = [r for r in map(decide, found) if not (r.rule == "in-use" and not r.evidence.preset)]
    card_order: dict[str, int] = {}
    for i, c in enumerate(cards):
        if c.introduced_by:
            card_order.setdefault(c.introduced_by, i)
    recs = order_recommendations(decided, card_order)
    calls = (
        last_calls(past, areas, *_past_days_and_urls(store, past), period.end.isoformat()) if past else CallsSection()
    )
    off_note = (
        (
            f"{len(off_profile)} more method(s) named this period are outside the profile's areas: "
            f"{', '.join(off_profile[:6])}{' ...' if len(off_profile) > 6 else ''}"
        )
        if off_profile
        else ""
    )
    relevant = _relevant_to(store, used_profile)
    topics = sorted(terms.topics, key=lambda t: (-(t.growth or 0.0), t.id))
    growing = [t for t in topics if (t.growth or 0) > 0]
    shown_topics = [t for t in growing if _topic_is_relevant(store, used_profile, t)]
    named = [m for m in terms.new_methods if relevant(m.example_ids, m.name)]
    new_names = [m for m in named if m.kind in kinds]
    left_out = [t.label for t in growing if t not in shown_topics] + [
        m.name for m in terms.new_methods if m not in named
    ]
    topics_note = (
        f"left out as unrelated to the profile: {', '.join(left_out[:8])}{' ...' if len(left_out) > 8 else ''}"
        if left_out
        else ""
    )
    summary_note = (summarizer.note() if isinstance(summarizer, EndpointSummarizer) else "") or summarizer.name
    return ReportContent(
        title=cfg.title,
        period=PeriodInfo(period.label, period.start.isoformat(), period.end.isoformat(), period.describe()),
        generated_at=utc_now(),
        headline=headline,
        tag_volume=tag_volume,
        trends=ReportTrends(
            as_of=terms.as_of,
            start=terms.recent.start if terms.recent else "",
            baseline_start=terms.baseline.start if terms.baseline else "",
            tags_baseline=f"{tb.start}..{tb.end}" if (tb := trends.tags.baseline) else "",
            emerging=terms.emerging[:10],
            declining=terms.declining[:6],
            new_methods=new_names[:10],
            new_models=[m for m in named if m.kind == "model"][:8],
            new_benchmarks=[m for m in named if m.kind == "benchmark"][:8],
            topics=shown_topics[:6],
        ),
        top_overall=top_overall,
        top_papers=by_tag,
        posts=post_items,
        posts_total=len(posts),
        recommendations=recs,
        new_this_week=new,
        runs=runs[:10],
        notes=Notes(
            profile=profile_note,
            summaries=summary_note,
            off_profile=off_note,
            tags="" if Tags(store).known() else "no tags yet: run `radar tag` for per-tag sections",
            ranking=f"score = {cfg.relevance_weight:g} relevance + {cfg.novelty_weight:g} novelty + "
            f"{cfg.recency_weight:g} recency",
            topics=topics_note,
        ),
        summary=executive_summary(
            recs,
            tag_bullet(tag_volume, used_profile, by_tag),
            top_overall,
            shown_topics,
            runs,
            new,
        ),
        elsewhere=elsewhere_items,
        calls=calls,
    )


def _past_days_and_urls(store: Database, past: Sequence[PastWeek]) -> tuple[dict[str, str], dict[str, str]]:
    """The day each later paper naming an earlier week's card entered the record, and the cards' papers' links."""
    later = {d for w in past for c in w.cards for d in c.used_by}
    intros = {c.introduced_by for w in past for c in w.cards if c.introduced_by}
    docs = Documents(store).of(later | intros)
    days = {i: entered(i, d.published)[:10] for i, d in docs.items() if i in later}
    return days, {i: d.url for i, d in docs.items() if i in intros}
