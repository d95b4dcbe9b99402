"""Method cards: one per introduced or spreading name, from the stored contributions and mentions.

A card says what the name is (kind, area), which paper introduced it and that paper's own code links (links in
its own abstract only), what it changes and builds on, the later papers that name it or compare against it
(their ids; the counts are those lists' lengths, so they equal what the store holds), when it was first seen,
and which reproduction preset covers it (or that none does). Presets come from the caller (a name -> title
mapping): analysis does not read repro.

- ``week_cards``: the cards of one ISO week's papers, the lab's areas first (``radar methods --week``);
- ``card_for``: one name's card (``radar methods --name``), introduced or spreading;
- ``introduced_methods``: the methods and systems papers of a period introduce (what is *new* in a period:
  introduced by one of its papers, not first seen in several);
- ``all_cards``: every introduced name and every spreading name (the dashboard's list).

A card belongs to one sense of its name (``senses.py``: GRPO = Group Relative Policy Optimization, not the
Group Robust Preference Optimization another paper introduced): its adoption counts the papers of that sense
only, and ``card_for`` shows the sense the lab's areas (then most papers) use, naming the others. A name in use
from the store's first weeks that no stored paper introduces (PPO, DPO) was introduced before the stored
papers begin: its card says so (``status`` "before-corpus", ``introduced_by`` None). Names of several words
("Dr. GRPO") are found in later papers by their phrase (the mentions table keys tokens).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields, replace
from datetime import date, timedelta

from radar.analysis.contributions.areas import card_area
from radar.analysis.contributions.card import KNOWN_BEFORE as KNOWN_BEFORE  # the card record lives in card.py
from radar.analysis.contributions.card import MethodCard, OtherSense
from radar.analysis.contributions.consequence import early_uses
from radar.analysis.contributions.errors import ContributionsError
from radar.analysis.contributions.extract import extract, papers_naming, phrase_mention
from radar.analysis.contributions.find import changes_line
from radar.analysis.contributions.model import shipped_model
from radar.analysis.contributions.plugin_point import plugin_point
from radar.analysis.contributions.senses import Intro, Sense, sense_with, senses_of
from radar.analysis.contributions.table import ContributionRow, Contributions, MentionRow
from radar.analysis.contributions.update import name_key
from radar.analysis.names.table import NameRow
from radar.crawler.documents import Documents
from radar.index.tags_table import Tags
from radar.store.dates import week_monday
from radar.store.table import Database

Presets = Mapping[str, str]  # preset name -> title (app/wiring.repro_presets)
TagGroups = Mapping[str, str]  # tag -> taxonomy group

_FOLD = re.compile(r"[^a-z0-9]")
KIND_ORDER = ("method", "system", "model", "hardware", "benchmark", "other")
# spreading: a name no stored paper introduces, of a kind a lab adopts, named by at least this many papers
SPREADING_KINDS = ("method", "system", "model", "hardware")
MIN_SPREADING = 5
# a name no stored paper introduces whose first stored mention is at most this many days after the store's first
# paper was in use before the stored papers begin (PPO, DPO)
BEFORE_CORPUS_DAYS = 28


# -- periods and presets -----------------------------------------------------------------------------------
def parse_week(text: str) -> tuple[date, date]:
    """(Monday, Sunday) of an ISO week written YYYY-Www; one line naming the fix otherwise."""
    try:
        start = week_monday(text)
    except ValueError:
        start = None
    if start is None:
        raise ContributionsError(f"--week {text!r} is not an ISO week; write it as YYYY-Www, e.g. 2025-W39")
    return start, start + timedelta(days=6)


def iso_week(day: str) -> str:
    try:
        y, w, _ = date.fromisoformat(day[:10]).isocalendar()
    except ValueError:
        return ""
    return f"{y}-W{w:02d}"


def _fold(text: str) -> str:
    return _FOLD.sub("", text.lower())


def preset_for(name: str, presets: Presets) -> tuple[str, str]:
    """(preset, title) of the reproduction preset whose name or title's head is ``name`` (Dr. GRPO = dr_grpo,
    GSPO = "GSPO (group sequence ...)"), ('', '') when none is."""
    key = _fold(name)
    if not key:
        return "", ""
    for preset, title in presets.items():
        if _fold(preset) == key:
            return preset, title
    for preset, title in presets.items():
        head = re.split(r"\s*\(|'s\b|\s+with\b", title, maxsplit=1)[0]
        if _fold(head) == key:
            return preset, title
    return "", ""


# what an introduced name's card shows as its paper's row stores it: the fields both have, but those the card
# reads for itself (a field added to both shows on the card)
AS_STORED = tuple(
    f.name
    for f in fields(MethodCard)
    if f.name in {g.name for g in fields(ContributionRow)} and f.name not in ("area", "changes")
)


# -- building cards -----------------------------------------------------------------------------------------
def _area(row: ContributionRow, tags: Iterable[str], groups: TagGroups | None, title: str, abstract: str) -> str:
    """The lab's reading of the paper's area (``areas.card_area``: the stored tags, the model, what the text is
    about)."""
    return card_area(row.area, tags, groups, title, abstract)


def _adoption(mentions: Sequence[MentionRow], intro_id: str | None, since: str) -> tuple[list[str], list[str]]:
    used = [m for m in mentions if m.doc_id != intro_id and m.published >= since]
    return [m.doc_id for m in used], [m.doc_id for m in used if m.compared]


def _merge(*groups: Iterable[MentionRow]) -> list[MentionRow]:
    """One mention per paper (compared if any says so; the first long form), oldest first."""
    merged: dict[str, MentionRow] = {}
    for group in groups:
        for m in group:
            old = merged.get(m.doc_id)
            merged[m.doc_id] = (
                m
                if old is None
                else replace(old, compared=old.compared or m.compared, expansion=old.expansion or m.expansion)
            )
    return sorted(merged.values(), key=lambda m: (m.published, m.doc_id))


def mentions_for(contributions: Contributions, names: Iterable[tuple[str, str]]) -> dict[str, list[MentionRow]]:
    """The stored papers naming each (name, since) by its spelling key, oldest first; for a name of several
    words ("Dr. GRPO") also the papers on or after ``since`` whose text holds the phrase (by key -> list)."""
    wanted = list(dict.fromkeys(names))
    found = contributions.mentions_of(name_key(n) for n, _ in wanted)
    phrases = [(n, since) for n, since in wanted if " " in n.strip()]
    if phrases:
        first = min(since for _, since in phrases)
        asked = [n for n, _ in phrases]
        # one pass over the later texts, those holding none of the phrases skipped by one pattern (``papers_naming``;
        # SQLite's instr() of their first words took 1.3-1.6 s for a week's 50 phrases on 93k papers)
        papers = contributions.papers_since(first)
        hits = papers_naming(papers, asked)
        for n, since in phrases:
            extra = []
            for paper in hits.get(n, []):
                named, compared = phrase_mention(paper.title, paper.abstract, n)
                if named and paper.published >= since:
                    extra.append(MentionRow(paper.doc_id, paper.published, compared))
            key = name_key(n)
            found[key] = _merge(found.get(key, []), extra)
    return found


def _other_senses(
    senses: Sequence[Sense], mine: Sense | None, intros: Sequence[ContributionRow]
) -> tuple[OtherSense, ...]:
    out = []
    for s in senses:
        if s is mine or (not s.key and not any(r.doc_id in s.ids for r in intros)):
            continue
        first = next((r for r in intros if r.doc_id in s.ids), None)
        if first is None and len(s.mentions) < 2:
            continue  # one paper's long form, introducing nothing: too little to call it another meaning
        out.append(
            OtherSense(
                s.expansion,
                len(s.mentions),
                first.doc_id if first else None,
                first.published if first else "",
                (first.changes_rewritten or first.changes) if first else "",
            )
        )
    return tuple(out)


def _card(
    row: ContributionRow,
    mentions: Sequence[MentionRow],
    titles: Mapping[str, str],
    tags: Sequence[str],
    groups: TagGroups | None,
    presets: Presets,
    intros: Sequence[ContributionRow] = (),
    start: str = "",
    senses: Sequence[Sense] | None = None,
    abstracts: Mapping[str, str] | None = None,
) -> MethodCard:
    """The card of one introducing row; ``senses``: ``senses_of(mentions)`` when the caller has it (the cards
    of one name share it); ``abstracts``: the introducing papers' abstracts (what the area reads)."""
    senses = senses_of(mentions) if senses is None else senses
    mine = sense_with(senses, row.doc_id)
    own = list(mine.mentions) if mine is not None else list(mentions)
    used, compared = _adoption(own, row.doc_id, row.published)
    early = early_uses((m.published for m in own if m.doc_id != row.doc_id), row.published)
    prior = sum(m.published < row.published for m in own)
    first = own[0] if own else MentionRow(row.doc_id, row.published, False)
    preset, preset_title = preset_for(row.name, presets)
    title = titles.get(row.doc_id, "")
    area = _area(row, tags, groups, title, (abstracts or {}).get(row.doc_id, ""))
    changes = row.changes_rewritten or row.changes
    return MethodCard(
        **{f: getattr(row, f) for f in AS_STORED},  # name, kind, code, builds_on, also, score, ...
        area=area,
        status="introduced",
        introduced_by=row.doc_id,
        title=title,
        introduced_on=row.published,
        week=iso_week(row.published),
        changes=changes,
        used_by=tuple(used),
        compared_by=tuple(compared),
        first_seen=min(first.published, row.published) if first.published else row.published,
        first_id=first.doc_id if first.published and first.published <= row.published else row.doc_id,
        preset=preset,
        preset_title=preset_title,
        prior_mentions=prior,
        expansion=mine.expansion if mine is not None else "",
        other_senses=_other_senses(senses, mine, intros),
        in_use_at_start=prior > 0 and first.doc_id != row.doc_id and _at_start(first.published, start),
        plugin_point="" if preset else plugin_point(title, "", changes, area),
        early_uses=early,
    )


def _at_start(day: str, start: str) -> bool:
    """Whether ``day`` is within ``BEFORE_CORPUS_DAYS`` of the store's first paper (``start``)."""
    if not day or not start:
        return False
    return (date.fromisoformat(day[:10]) - date.fromisoformat(start[:10])).days <= BEFORE_CORPUS_DAYS


def _intros(rows: Iterable[ContributionRow]) -> list[Intro]:
    return [Intro(r.doc_id, r.published, r.area) for r in rows]


def cards_of(
    store: Database, rows: Sequence[ContributionRow], presets: Presets, groups: TagGroups | None = None
) -> list[MethodCard]:
    """One card per introducing row (adoption counted from the store's mentions, in the row's sense)."""
    if not rows:
        return []
    ids = [r.doc_id for r in rows]
    contributions = Contributions(store)
    mentions = mentions_for(contributions, ((r.name, r.published) for r in rows))
    docs = Documents(store).of(ids)
    titles = {i: d.title for i, d in docs.items()}
    abstracts = {i: d.abstract for i, d in docs.items()}
    tags = Tags(store).of(ids)
    intros: dict[str, list[ContributionRow]] = {}  # every stored paper introducing each name (senses split on them)
    for r in contributions.introductions_of({r.name_key for r in rows}):
        intros.setdefault(r.name_key, []).append(r)
    start = contributions.first_paper_day()
    senses: dict[str, list[Sense]] = {}  # per name: the rows of one name share its mentions' senses
    for r in rows:
        if r.name_key not in senses:
            senses[r.name_key] = senses_of(mentions.get(r.name_key, []), _intros(intros.get(r.name_key, [])))
    return [
        _card(
            r,
            mentions.get(r.name_key, []),
            titles,
            tags.get(r.doc_id, []),
            groups,
            presets,
            intros.get(r.name_key, []),
            start,
            senses[r.name_key],
            abstracts,
        )
        for r in rows
    ]


def as_main(store: Database, row: ContributionRow, also: str) -> ContributionRow:
    """A name a paper introduces beside its main one (CISPO in the MiniMax-M1 paper) as that paper's row: its
    own key, the clause that introduces it."""
    doc = Documents(store).get(row.doc_id)
    others = (row.name, *(a for a in row.also if a != also))
    if doc is None:
        return replace(row, name=also, name_key=name_key(also), also=others, changes_rewritten="")
    line = changes_line(doc.title, doc.abstract, also)
    ex = extract(doc.title, doc.abstract)
    c = next((c for c in ex.candidates if c.surface == also), None)
    kind, kind_score = shipped_model().kind_of(ex, c, doc.categories) if c is not None else (row.kind, row.kind_score)
    return replace(
        row,
        name=also,
        name_key=name_key(also),
        also=others,
        changes=line or row.changes,
        changes_rewritten="",
        kind=kind,
        kind_score=kind_score,
    )


def introducing_rows(store: Database, name: str) -> list[ContributionRow]:
    """The stored papers introducing ``name`` (any spelling) as their main name or beside it, oldest first."""
    key = name_key(name.strip())
    if not key:
        return []
    contributions = Contributions(store)
    rows = contributions.introductions_of([key])
    seen = {r.doc_id for r in rows}
    for intro in contributions.introductions_also_naming(name.strip()):
        also = next((a for a in intro.also if name_key(a) == key), "")
        if also and intro.doc_id not in seen:
            rows.append(as_main(store, intro, also))
    return sorted(rows, key=lambda r: (r.published, r.doc_id))


def _keys(row: NameRow) -> list[str]:
    return list(dict.fromkeys(k for k in (name_key(s) for s in (row.name, *row.aliases)) if k))


def _preset(names: Iterable[str], presets: Presets) -> tuple[str, str]:
    for n in names:
        found = preset_for(n, presets)
        if found[0]:
            return found
    return "", ""


def _unintroduced(
    store: Database,
    name: str,
    kind: str,
    sense: Sense,
    others: tuple[OtherSense, ...],
    presets: Presets,
    aliases: Sequence[str] = (),
) -> MethodCard:
    """The card of a sense no stored paper introduces: in use from the store's first weeks ("before-corpus",
    PPO, DPO), else spreading (introduced outside the store)."""
    used, compared = _adoption(sense.mentions, None, "")
    first = sense.mentions[0]
    before = _at_start(first.published, Contributions(store).first_paper_day())
    preset, preset_title = _preset((name, *aliases), presets)
    return MethodCard(
        name=name,
        kind=kind or ("method" if preset else ""),  # a reproduction preset reproduces a method
        area="",
        status="before-corpus" if before else "spreading",
        introduced_by=None,
        title="",
        introduced_on="",
        week="",
        code=(),
        changes="",
        builds_on=(),
        also=(),
        used_by=tuple(used),
        compared_by=tuple(compared),
        first_seen=first.published,
        first_id=first.doc_id,
        preset=preset,
        preset_title=preset_title,
        score=1.0,
        expansion=sense.expansion,
        other_senses=others,
    )


def _spreading(
    row: NameRow, found: Mapping[str, Sequence[MentionRow]], store: Database, presets: Presets
) -> MethodCard:
    senses = senses_of(_merge(*(found.get(k, []) for k in _keys(row))))
    if not senses:
        return _unintroduced(
            store,
            row.name,
            row.kind,
            Sense("", "", (MentionRow(row.first_id, row.first_seen, False),), 0),
            (),
            presets,
            row.aliases,
        )
    return _unintroduced(
        store, row.name, row.kind, senses[0], _other_senses(senses, senses[0], ()), presets, row.aliases
    )


def card_for(
    store: Database, name: str, presets: Presets, names: Sequence[NameRow] = (), groups: TagGroups | None = None
) -> MethodCard:
    """The card of ``name`` (any spelling), in the sense the lab's areas use most (then most papers; the other
    senses are named on it): from the earliest stored paper introducing that sense, else, when no stored paper
    does, from the papers naming it (before the corpus, or spreading), its kind from the names table
    (``names``: its rows) or the labeled lexicon."""
    typed = name.strip()
    key = name_key(typed)
    rows = introducing_rows(store, typed) if key else []
    found = mentions_for(Contributions(store), [(typed, ""), *((r.name, "") for r in rows)]) if key else {}
    senses = senses_of(found.get(key, []), _intros(rows))
    if rows:
        main = senses[0] if senses else None
        mine = [r for r in rows if main is None or r.doc_id in main.ids]
        if mine:
            docs = Documents(store).of([r.doc_id for r in mine])
            titles = {i: d.title for i, d in docs.items()}
            abstracts = {i: d.abstract for i, d in docs.items()}
            tags = Tags(store).of([r.doc_id for r in mine])
            start = Contributions(store).first_paper_day()
            cards = [
                _card(
                    r,
                    found.get(key, []),
                    titles,
                    tags.get(r.doc_id, []),
                    groups,
                    presets,
                    rows,
                    start,
                    senses,
                    abstracts,
                )
                for r in mine
            ]
            new = next((c for c in cards if c.new), None)
            if new is not None or not senses:
                return new or cards[0]
            # every paper "introducing" it re-defines a name already in use (GRPO, PPO): the name predates them
    row = next((r for r in names if key and key in _keys(r)), None)
    if senses:
        kind = row.kind if row is not None else shipped_model().lexicon.get(typed.lower(), "")
        shown = row.name if row is not None else typed
        others = _other_senses(senses, senses[0], rows)
        return _unintroduced(store, shown, kind, senses[0], others, presets, row.aliases if row else ())
    if row is not None:
        return _spreading(row, Contributions(store).mentions_of(_keys(row)), store, presets)
    raise ContributionsError(
        f"no stored paper introduces or names {name!r}; list a week's cards with `radar methods --week YYYY-Www` "
        "or the names found with `radar methods`"
    )


def all_cards(
    store: Database, presets: Presets, names: Sequence[NameRow] = (), groups: TagGroups | None = None
) -> list[MethodCard]:
    """Every introduced name (its earliest introducing paper) and every spreading name (a names-table name of
    a kind labs adopt, named by at least ``MIN_SPREADING`` papers, that no stored paper introduces)."""
    earliest: dict[str, MethodCard] = {}
    for card in cards_of(store, Contributions(store).introductions(), presets, groups):
        if card.new:
            earliest.setdefault(name_key(card.name), card)
    cards = list(earliest.values())
    spreading = [
        row
        for row in names
        if row.kind in SPREADING_KINDS and row.count >= MIN_SPREADING and not set(_keys(row)) & earliest.keys()
    ]
    found = Contributions(store).mentions_of(k for row in spreading for k in _keys(row))
    return cards + [_spreading(row, found, store, presets) for row in spreading]
