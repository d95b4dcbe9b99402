"""Framework adoption: which stored commits and releases of the frameworks a lab runs name which method cards.

An entry (crawler/frameworks.py) names a card when its subject or text holds

- the arXiv id of the paper introducing the card's name (``via`` "arxiv-id": unambiguous), or
- the card's name or one of its ``also`` names as a whole token sequence ("Dr_GRPO" and "Dr. GRPO" alike, never
  "GRPO" inside "GRPOTrainer"), under the sense rules below (``via`` "name", or "expansion" when the entry spells
  out the long form of one of the name's senses).

Sense rules, for a name hit: the name's senses are those of the cards (``senses.py``: the long forms the papers
give), each with its area (the introducing paper's, else most of its papers') and its first day.

1. A sense introduced by a stored paper more than ``EARLY_DAYS`` after the entry is not what the entry names (a
   2024 commit "fix SPARK tests" is not a 2025 paper's SPARK).
2. The entry spells out one sense's long form: that sense.
3. The sense holding at least ``DOMINANT`` of the name's papers (any date: GRPO's Group Relative Policy
   Optimization, not the one paper's Group Robust Preference Optimization) is the meaning; without one, the
   sense holding that share among those in an area the framework works in (``COMPATIBLE``: TRL's RL
   post-training, vLLM's systems, PEFT's training efficiency; a sense's area is that of most of its papers);
   without either the name is a reused acronym and the hit is left unmatched (TRL's "Add SAPO Loss" with four
   unrelated SAPO papers stored, none of them the one TRL added).
4. A meaning outside the framework's areas matches only by a distinctive name (a digit, a hyphen or several
   words, or 6+ letters such as FlashAttention-4); a short acronym does not (DAPO in a KV-cache library, SFT =
   supervised fine-tuning, a general LLM term, in TRL).
5. The name is spelled as the card spells it, case included ("args" is not ARGS, "spark" not SPARK); a name that
   is an English word ("SPARK", "EAGLE", "Scope": the GCIDE dictionary of the english-words package) never
   matches by rule 4.

Only methods and systems are looked for (``KINDS``): a commit naming Qwen3, H100 or GSM8K adopts no method.

An entry whose text names no card stays stored and is shown nowhere; ``refresh_matches`` recomputes every match
when entries, papers, contributions or the names table change (a paper imported later can explain an older
commit).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta
from functools import cache

from english_words import get_english_words_set

from radar.analysis.contributions.adoptions import Adopted, Adoptions, FrameworkMatch
from radar.analysis.contributions.cards import MIN_SPREADING, MethodCard, mentions_for
from radar.analysis.contributions.labels import LEAD_KINDS
from radar.analysis.contributions.model import shipped_model
from radar.analysis.contributions.senses import same_sense, sense_key, senses_of
from radar.analysis.contributions.table import ContributionRow, Contributions
from radar.analysis.contributions.update import name_key
from radar.analysis.names.table import Names
from radar.crawler.documents import Documents
from radar.crawler.frameworks import FrameworkEntries, FrameworkEntry
from radar.store.table import Database

MATCHER_VERSION = "frameworks-4"
KINDS = LEAD_KINDS  # what a framework adopts: methods and systems (not the models, benchmarks or orgs it names)
# the card areas whose methods a framework of each area can take in (a source's ``area``)
COMPATIBLE = {
    "rl-post-training": frozenset({"rl-post-training"}),
    "hardware-systems": frozenset({"hardware-systems"}),
    "training-efficiency": frozenset({"hardware-systems", "other-llm"}),
}
DOMINANT = 0.8  # share of a name's papers (in the framework's areas) that makes one sense the meaning
EARLY_DAYS = 30  # an entry this many days before a sense's first paper can still be about it (code before paper)
DISTINCT_LETTERS = 6
MIN_LETTERS = 3  # shorter names (A3, RM, R^3) are not looked for: too many things are called that
MAX_WORDS = 4  # names of up to this many tokens are looked up
_TOKEN = re.compile(r"[^\W_]+\+*")  # letters and digits of any script, a trailing "+" kept (GRPO++)
_ARXIV_ID = re.compile(r"(?<![\d.])(\d{4}\.\d{4,5})(?:v\d+)?(?![\d.])")


@cache
def english_words() -> frozenset[str]:
    """GCIDE's words, lower case (english-words: 114k words; WordNet-sized, so 'sapo' or 'dora' are not words)."""
    return frozenset(get_english_words_set(["gcide"], alpha=True, lower=True))


def _form(text: str) -> str:
    """A name's letters, digits and "+", lower case: "Dr. GRPO", "dr_grpo" and "Dr GRPO" are one form."""
    return "".join(_TOKEN.findall(text.lower()))


def is_word(name: str) -> bool:
    return _form(name) in english_words()


def distinctive(name: str) -> bool:
    """A name unlikely to mean anything else: with a digit, a hyphen, several words, or long."""
    form = _form(name)
    return len(form) >= DISTINCT_LETTERS or (len(form) >= 4 and bool(re.search(r"\d|-|\s|\.", name.strip())))


@dataclass(frozen=True, slots=True)
class SenseInfo:
    """One meaning of a name, as the matcher weighs it."""

    key: str  # sense key ('' when no paper spells the name out)
    expansion: str
    area: str  # the area of most of its papers (its introducing paper's when they have none)
    intro_id: str  # its earliest introducing paper ('' when none is stored)
    day: str  # YYYY-MM-DD of its first paper
    papers: int = 1


@dataclass(frozen=True, slots=True)
class _Name:
    name: str  # the card's spelling
    key: str


def _plus(day: str, days: int) -> str:
    return (date.fromisoformat(day[:10]) + timedelta(days=days)).isoformat()


def _majority(areas: Iterable[str]) -> str:
    counts = Counter(a for a in areas if a)
    return counts.most_common(1)[0][0] if counts else ""


class Matcher:
    """The names of the store's cards, looked up in entries; senses computed once per name hit."""

    def __init__(self, store: Database, names: Sequence[str] = ()) -> None:
        self.store = store
        self.lexicon = shipped_model().lexicon
        # forms of names that are not methods or systems (NVIDIA, DeepSeek-R1, multi-GPU): never matched, and a
        # method inside one ("DeepSeek" inside "DeepSeek-R1") is not matched there either
        self.blocked: set[str] = set()
        named_rows = Names(store).names()  # as last computed (`radar methods`, trends)
        for named in named_rows:  # with their kinds
            if named.kind not in (*KINDS, "unknown"):
                self.blocked.update(_form(n) for n in (named.name, *named.aliases))
        self.forms: dict[str, list[_Name]] = defaultdict(list)
        self.intros: dict[str, list[ContributionRow]] = defaultdict(list)  # by key (main or also name)
        self.by_paper: dict[str, _Name] = {}
        self._senses: dict[str, list[SenseInfo]] = {}
        for row in Contributions(store).introductions():  # its main name when a method or system, and the others
            for i, name in enumerate((row.name, *row.also)):
                entry = self._add(name) if i or row.kind in KINDS else None
                if entry is not None:
                    self.intros[entry.key].append(row)
                    if i == 0:
                        self.by_paper[row.doc_id] = entry
        for named in named_rows:  # their spellings
            if named.kind in KINDS and named.count >= MIN_SPREADING:
                for name in (named.name, *named.aliases):
                    self._add(name)
        for name in names:  # the caller's (the reproduction presets' methods: Dr. GRPO)
            self._add(name)

    def _add(self, name: str) -> _Name | None:
        form, key = _form(name), name_key(name)
        if len(form) < MIN_LETTERS or form.isdigit() or not key or len(_TOKEN.findall(name)) > MAX_WORDS:
            return None
        if form in self.blocked or self.lexicon.get(name.lower(), "") not in ("", *KINDS):
            self.blocked.add(form)  # the names table or the labeled lexicon: a model, benchmark, org or word (RL)
            return None
        entry = next((n for n in self.forms[form] if n.key == key), None)
        if entry is None:
            entry = _Name(name, key)
            self.forms[form].append(entry)
        return entry

    def senses(self, named: _Name) -> list[SenseInfo]:
        if named.key in self._senses:
            return self._senses[named.key]
        rows = sorted(self.intros.get(named.key, []), key=lambda r: (r.published, r.doc_id))
        mentions = mentions_for(Contributions(self.store), [(named.name, "")]).get(named.key, [])
        out: list[SenseInfo] = []
        placed: set[str] = set()
        for s in senses_of(mentions):
            mine = [r for r in rows if r.doc_id in s.ids]
            placed.update(r.doc_id for r in mine)
            area = _majority(m.area for m in s.mentions) or (mine[0].area if mine else "")
            day = min([s.mentions[0].published, *(r.published for r in mine)])
            out.append(SenseInfo(s.key, s.expansion, area, mine[0].doc_id if mine else "", day, len(s.mentions)))
        out += [SenseInfo("", "", r.area, r.doc_id, r.published) for r in rows if r.doc_id not in placed]
        self._senses[named.key] = out
        return out

    def hits(self, entry: FrameworkEntry) -> list[tuple[_Name, str]]:
        """(name, its surface in the entry) for every stored name the entry's subject or text holds."""
        text = f"{entry.title}\n{entry.text}"
        spans = [(m.start(), m.end(), m.group().lower()) for m in _TOKEN.finditer(text)]
        hits: list[tuple[int, int, _Name | None, str]] = []
        for i in range(len(spans)):
            form = ""
            for j in range(i, min(i + MAX_WORDS, len(spans))):
                form += spans[j][2]
                if form in self.blocked and j > i:
                    hits.append((i, j, None, ""))  # its span hides the names inside it
                for candidate in self.forms.get(form, ()):
                    surface = text[spans[i][0] : spans[j][1]]
                    if _form_cased(surface) != _form_cased(candidate.name):
                        continue  # spelled as the card spells it: "args" is not ARGS, "to trl" not ToTRL
                    hits.append((i, j, candidate, surface))
        found: dict[str, tuple[_Name, str]] = {}
        for i, j, named, surface in hits:  # a name inside a longer one found there is the longer one's (Dr. GRPO)
            if named is not None and not any(a <= i and j <= b and (a, b) != (i, j) for a, b, _, _ in hits):
                found.setdefault(named.key, (named, surface))
        return list(found.values())

    def resolve(self, entry: FrameworkEntry, named: _Name) -> tuple[SenseInfo, str] | None:
        """The sense of ``named`` that ``entry`` means and how it was told, or None (rules 1-5)."""
        day = entry.published[:10]
        # only a stored introduction dates a sense: a name no stored paper introduces began before its first mention
        infos = [s for s in self.senses(named) if not s.intro_id or s.day <= _plus(day, EARLY_DAYS)]
        if not infos:
            return None
        text = f"{entry.title}\n{entry.text}".lower()
        spelled = [s for s in infos if s.expansion and s.expansion.lower() in text]
        if spelled:
            return spelled[0], "expansion"
        areas = COMPATIBLE.get(entry.area, frozenset())
        senses = self.senses(named)  # any date: a reused acronym shows in later papers too
        main = max(senses, key=lambda s: s.papers)
        if main.papers < DOMINANT * sum(s.papers for s in senses):  # no meaning most papers share
            compatible = [s for s in senses if s.area in areas]
            main = max(compatible, key=lambda s: s.papers) if compatible else main
            if not compatible or main.papers < DOMINANT * sum(s.papers for s in compatible):
                return None  # rule 3: several meanings the framework could take in
        if main not in infos:
            return None  # rule 1
        if main.area in areas or (distinctive(named.name) and not is_word(named.name)):
            return main, "name"
        return None  # rule 4

    def match(self, entry: FrameworkEntry) -> list[FrameworkMatch]:
        out: dict[str, FrameworkMatch] = {}
        for paper in _ARXIV_ID.findall(f"{entry.title}\n{entry.text}"):
            named = self.by_paper.get(paper)
            if named is not None and named.key not in out:
                sense = next((s for s in self.senses(named) if s.intro_id == paper), None)
                key = sense.key if sense is not None else ""
                out[named.key] = FrameworkMatch(entry.id, named.key, named.name, paper, key, "arxiv-id")
        for named, _ in self.hits(entry):
            if named.key in out:
                continue
            found = self.resolve(entry, named)
            if found is not None:
                sense, via = found
                out[named.key] = FrameworkMatch(entry.id, named.key, named.name, sense.intro_id, sense.key, via)
        return list(out.values())


def _form_cased(text: str) -> str:
    return "".join(_TOKEN.findall(text))


def matches_state(store: Database, names: Sequence[str] = ()) -> str:
    models = ",".join(f"{k}={v}" for k, v in sorted(Contributions(store).contribution_models().items()))
    extra = ",".join(sorted(names))
    return "|".join(
        (
            MATCHER_VERSION,
            FrameworkEntries(store).framework_entries_state(),
            Documents(store).fingerprint(),
            models,
            Names(store).names_state(),
            extra,
        )
    )


def refresh_matches(store: Database, names: Sequence[str] = ()) -> int | None:
    """Match every stored entry again when entries, papers, contributions, the names table or ``names`` (more
    names to look for) changed since the last matching (None when nothing did); the number of matches stored
    otherwise."""
    state = matches_state(store, names)
    adoptions = Adoptions(store)
    if adoptions.framework_matches_state() == state:
        return None
    entries = list(FrameworkEntries(store).framework_entries())
    matches: list[FrameworkMatch] = []
    if entries:
        matcher = Matcher(store, names)
        for entry in entries:
            matches += matcher.match(entry)
    return adoptions.replace_framework_matches(matches, state)


def belongs(adopted: Adopted, card: MethodCard) -> bool:
    """Whether a stored match is about this card's sense of the name."""
    if adopted.intro_id and adopted.intro_id == card.introduced_by:
        return True
    if adopted.sense and card.expansion:
        return same_sense(adopted.sense, sense_key(card.expansion))
    return not adopted.sense and not adopted.intro_id


def with_adoptions(adoptions: Adoptions, cards: Sequence[MethodCard]) -> list[MethodCard]:
    """``cards`` with ``adopted`` filled: the framework entries naming each card's sense, oldest first, one per
    framework and link."""
    found = adoptions.adoptions_of(name_key(c.name) for c in cards)
    out = []
    for card in cards:
        seen: set[tuple[str, str]] = set()
        mine = []
        for a in found.get(name_key(card.name), []):
            if belongs(a, card) and (a.framework, a.link) not in seen:
                seen.add((a.framework, a.link))
                mine.append(a)
        out.append(replace(card, adopted=tuple(mine)) if mine else card)
    return out


def first_adoptions(adopted: Iterable[Adopted]) -> dict[str, Adopted]:
    """The earliest entry of each framework."""
    first: dict[str, Adopted] = {}
    for a in sorted(adopted, key=lambda a: (a.date, a.framework)):
        first.setdefault(a.framework, a)
    return first
