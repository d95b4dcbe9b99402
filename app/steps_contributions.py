"""Contribution steps: decide what new papers introduce, and the method cards built on that.

    radar import / radar crawl (and so radar weekly) -> refresh(radar, store)   (new papers cost seconds)
    radar methods --week W / --name N               -> week / name_card
    trends, the report (next)                       -> new_methods(radar, store, since, until)

The stage gets its collaborators here: the reproduction presets (repro is app's to read), the taxonomy's tag
groups (the stored tags place a paper in the lab's areas when the tagger has run) and, when [report]
summary_endpoint is set, the endpoint that rewrites a card's ``changes`` line (cached in the store; the
extractive line stays the fallback).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import replace
from importlib import resources
from pathlib import Path

from radar.analysis.contributions import prebuilt
from radar.analysis.contributions.adoptions import Adoptions
from radar.analysis.contributions.cards import MethodCard, TagGroups, card_for
from radar.analysis.contributions.frameworks import refresh_matches, with_adoptions
from radar.analysis.contributions.model import MODEL_FILE, shipped_model
from radar.analysis.contributions.prebuilt import PrebuiltContributions
from radar.analysis.contributions.table import Contributions
from radar.analysis.contributions.update import Progress, UpdateReport, update_contributions
from radar.analysis.contributions.week import introduced_methods, week_cards
from radar.analysis.names.table import Names
from radar.app.context import Radar
from radar.crawler.documents import Documents
from radar.index.tags_table import Tags
from radar.reports.recommend import preset_name
from radar.repro.methods import catalog
from radar.store import WorkspaceError
from radar.store.errors import DiskError
from radar.store.table import Database

Rewrite = Callable[[str, str, str], str]  # (title, abstract, name) -> one line, '' when it could not


def update(
    radar: Radar,
    store: Database,
    *,
    progress: Progress | None = None,
    prebuilt: PrebuiltContributions | None = None,
) -> UpdateReport:
    """Decide the stored papers that have no contribution by the current model (under the stage's lock);
    ``prebuilt`` rows of the same model for the same texts are stored as they are."""
    with radar.ws.lock("contributions"):
        return update_contributions(store, progress=progress, prebuilt=prebuilt)


def refresh(radar: Radar, store: Database, *, prebuilt: PrebuiltContributions | None = None) -> UpdateReport | None:
    """Bring contributions, then the framework entries' matches to them, up to date, unless another process is
    doing so right now (then None: what is stored is read as it is, and that process completes it)."""
    try:
        report = update(radar, store, prebuilt=prebuilt)
        match_frameworks(radar, store)
    except WorkspaceError:
        return None
    return report


def match_frameworks(radar: Radar, store: Database) -> int | None:
    """Match the stored framework commits and releases to the cards' names again when anything they depend on
    changed (None when nothing did; a read-only workspace keeps the matches it has)."""
    if getattr(store, "read_only", False):
        return None
    titles = presets(radar)
    names = [preset_name(p, titles) for p in titles]  # the methods the lab can reproduce (Dr. GRPO)
    with radar.ws.lock("contributions"):
        return refresh_matches(store, names)


def prebuilt_beside(corpus: Path) -> tuple[PrebuiltContributions | None, str]:
    """The contributions shipped beside an imported corpus file for the current model, or None and why not
    ('' when there is no such file: nothing to say)."""
    path = prebuilt.beside(corpus)
    if not path.is_file():
        return None, ""
    try:
        return prebuilt.read(path, shipped_model().version), ""
    except prebuilt.PrebuiltError as exc:
        return None, f"prebuilt contributions not used, every paper is decided instead: {exc}"


def tag_groups(radar: Radar) -> TagGroups | None:
    groups = radar.tag_groups()
    return {t: g for g, tags in groups.items() for t in tags} if groups else None


def presets(radar: Radar) -> dict[str, str]:
    """Every reproduction preset (built-in and radar.toml's) by name -> title, from the preset catalog the
    repro API uses, without importing the pipeline's steps (trends, index: a second at the start of every command)."""

    return catalog(radar.settings.repro.presets).titles()


def version(radar: Radar, store: Database) -> str:
    """What the method cards of a span read besides its documents (the trends cache them under it): the stored
    contributions and mentions, the tags (the lab's areas), the presets, the tag groups and the shipped model
    (a new one decides every paper again)."""
    model = resources.files("radar.analysis.contributions").joinpath(MODEL_FILE).read_bytes()
    h = hashlib.blake2b(model, digest_size=8)
    h.update(repr((sorted(presets(radar).items()), sorted((tag_groups(radar) or {}).items()))).encode())
    models = ",".join(f"{m}:{n}" for m, n in sorted(Contributions(store).contribution_models().items()))
    return f"{models}|{Contributions(store).contributions_fingerprint()}|{Tags(store).fingerprint()}|{h.hexdigest()}"


def changes_writer(radar: Radar) -> Rewrite | None:
    """The summary endpoint as a one-line ``changes`` writer; None when [report] summary_endpoint is unset."""
    cfg = radar.settings.report
    if not cfg.summary_endpoint:
        return None
    from radar.reports.summarize import EndpointSummarizer, make_summarizer  # defers requests

    summarizer = make_summarizer(cfg)
    if not isinstance(summarizer, EndpointSummarizer):
        return None

    def rewrite(title: str, abstract: str, name: str) -> str:
        failures = summarizer.failures
        text = (
            f"{abstract}\n\nIn one line: what {name} is, or what it changes relative to which prior method or system."
        )
        line = summarizer.summarize(title, text)
        if summarizer.failures > failures or summarizer.broken:
            return ""  # the endpoint failed: keep the extractive line
        return " ".join(line.split())[:240]

    return rewrite


def rewrite_changes(store: Database, cards: Sequence[MethodCard], rewrite: Rewrite | None) -> list[MethodCard]:
    """Cards whose ``changes`` the endpoint rewrote (cached in the store, so each paper is asked once)."""
    if rewrite is None:
        return list(cards)
    ids = [c.introduced_by for c in cards if c.introduced_by]
    stored = Contributions(store).contributions(ids)
    docs = Documents(store).of([i for i in ids if i in stored and not stored[i].changes_rewritten])
    lines = {}
    for doc_id, doc in docs.items():
        line = rewrite(doc.title, doc.abstract, stored[doc_id].name)
        if line:
            lines[doc_id] = line
    if lines:
        with suppress(DiskError):  # a read-only workspace: the lines are shown, not kept (asked again next time)
            Contributions(store).set_rewritten_changes(lines)
    return [replace(c, changes=lines[c.introduced_by]) if c.introduced_by in lines else c for c in cards]


def week(radar: Radar, store: Database, week_label: str) -> list[MethodCard]:
    """``radar methods --week``: the week's cards (contributions brought up to date first)."""
    refresh(radar, store)
    cards = week_cards(store, week_label, presets(radar), tag_groups(radar))
    return with_adoptions(Adoptions(store), rewrite_changes(store, cards, changes_writer(radar)))


def name_card(radar: Radar, store: Database, name: str) -> MethodCard:
    """``radar methods --name``: one name's card, introduced, before the corpus or spreading (the names table,
    as last computed, gives a name no stored paper introduces its kind)."""
    refresh(radar, store)
    card = card_for(store, name, presets(radar), Names(store).names(), tag_groups(radar))
    return with_adoptions(Adoptions(store), rewrite_changes(store, [card], changes_writer(radar)))[0]


def new_methods(radar: Radar, store: Database, since: str, until: str) -> list[MethodCard]:
    """The methods and systems papers of [since, until] introduce in the lab's areas: what trends and the report
    call *new* (introduced by a paper of the period, not first seen in several)."""
    refresh(radar, store)
    return with_adoptions(
        Adoptions(store), introduced_methods(store, since, until, presets(radar), groups=tag_groups(radar))
    )
