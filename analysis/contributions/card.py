"""A method card (what a lead reads about one name) and its JSON, through msgspec.

The card is a frozen dataclass built by ``cards.py``; its JSON (`radar methods --json`, the dashboard's cards) is a
view of it built once per card (``CardJson.of``): msgspec fills the view from the card's attributes
(``msgspec.convert(card, CardJson, from_attributes=True)``, nested records included), so no key is copied by hand.
The view differs from the card where the JSON is a presentation: the counts ``uses``/``compares`` are the lists'
lengths (properties of the card), no preset is null, the scores are rounded, a framework entry shows its public
part (``AdoptedJson``), and what only ranks the card (``in_use_at_start``, ``early_uses``) is left out. msgspec's
``rename``/``omit_defaults`` cannot say null-for-empty, rounding or a projection, and an encoder hook never sees a
dataclass msgspec encodes natively: hence a view, whose ``__post_init__`` (run by the conversion) sets those.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

import msgspec
from msgspec.structs import force_setattr

from radar.analysis.contributions.adoptions import Adopted
from radar.analysis.contributions.consequence import NO_SCORE, Score, ScoreJson
from radar.analysis.contributions.extract import title_prefix
from radar.analysis.contributions.labels import LAB_AREAS
from radar.store.text import mixed_script

# a name at least this many stored papers named before a paper "introduces" it is not new there (the paper
# defines GRPO or GPT-4 for its readers), unless the paper's title starts with it (an acronym reused)
KNOWN_BEFORE = 20

# JSON as Python values (what ``msgspec.to_builtins`` gives)
Json: TypeAlias = "str | int | float | bool | None | list[Json] | dict[str, Json]"


@dataclass(frozen=True, slots=True)
class OtherSense:
    """Another meaning of a card's name ("GRPO" = Group Robust Preference Optimization), with its papers (its JSON
    is itself)."""

    expansion: str  # its long form ('' when its papers do not spell it out)
    papers: int  # stored papers meaning it
    introduced_by: str | None  # the stored paper introducing it, if any
    introduced_on: str
    what: str = ""  # what that paper says it is (its contribution's changes line; '' when none introduces it)


@dataclass(frozen=True, slots=True)
class MethodCard:
    """What a lead reads about one name."""

    name: str
    kind: str
    area: str  # rl-post-training | hardware-systems | other-llm | other ('' when unknown)
    # "introduced" (a stored paper introduces it), "spreading" (only named by stored papers) or "before-corpus"
    # (named from the store's first weeks on, introduced before its papers begin)
    status: str
    introduced_by: str | None  # the introducing paper's id
    title: str  # the introducing paper's title
    introduced_on: str  # YYYY-MM-DD
    week: str  # ISO week of the introduction ('' for a spreading name)
    code: tuple[str, ...]  # code links in the introducing paper's own abstract
    changes: str  # what it is or changes (the endpoint's line when rewritten, else the abstract's own)
    builds_on: tuple[str, ...]
    also: tuple[str, ...]  # other names the introducing paper introduces
    used_by: tuple[str, ...]  # later papers that name it, oldest first
    compared_by: tuple[str, ...]  # ... of which compare against it
    first_seen: str  # YYYY-MM-DD of the first stored paper naming it
    first_id: str
    preset: str  # the reproduction preset that covers it ('' when none does)
    preset_title: str
    score: float  # how sure the model is that the paper introduces it (1 for a spreading name)
    prior_mentions: int = 0  # stored papers that named it (in its sense) before the introducing paper
    expansion: str = ""  # its long form, as the papers of its sense spell it out
    other_senses: tuple[OtherSense, ...] = ()  # other meanings of the same name
    in_use_at_start: bool = False  # other papers named it (its sense) in the store's first weeks, before this one
    plugin_point: str = ""  # no preset expresses it: the plug-in point it would need (plugin_point.py)
    adopted: tuple[Adopted, ...] = ()  # framework commits/releases naming it (analysis/contributions/frameworks.py)
    named: bool = True  # False: a finding or recipe its paper gives no name (``name`` is a handle from the title)
    early_uses: int = 0  # later papers of its sense naming it in its first four weeks (as far as stored)
    consequence: Score = NO_SCORE  # how much a lead should care (``consequence.py``), set when a list is ranked

    @property
    def new(self) -> bool:
        """Introduced by its paper: not a name many stored papers used before (``KNOWN_BEFORE``) nor one in use
        when the stored papers begin (DPO), unless the paper's title starts with it (in one script: a name that
        mixes scripts is a lookalike of the name it folds to, not a new use of it)."""
        reused = title_prefix(self.title) == self.name and not mixed_script(self.name)  # DАPO cannot claim DAPO
        return self.status == "introduced" and (
            (self.prior_mentions < KNOWN_BEFORE and not self.in_use_at_start) or reused
        )

    @property
    def in_lab_areas(self) -> bool:
        return self.area in LAB_AREAS

    @property
    def uses(self) -> int:
        return len(self.used_by)

    @property
    def compares(self) -> int:
        return len(self.compared_by)


class AdoptedJson(msgspec.Struct, frozen=True):
    """A framework entry on a card's JSON: its public part (``adoptions.Adopted`` less how it matched)."""

    framework: str
    date: str
    link: str
    kind: str
    text: str


class CardJson(msgspec.Struct, frozen=True, kw_only=True):
    """``MethodCard`` as `radar methods --json` prints it (keys sorted there)."""

    name: str
    kind: str
    area: str
    status: str
    introduced_by: str | None
    title: str
    introduced_on: str
    week: str
    changes: str
    builds_on: list[str]
    also: list[str]
    code: list[str]
    uses: int
    compares: int
    used_by: list[str]
    compared_by: list[str]
    first_seen: str
    first_id: str
    preset: str | None  # null when no preset covers it
    preset_title: str | None
    plugin_point: str  # with no preset: the plug-in point the method would need (plugin_point.py), else ''
    score: float  # to 3 places
    prior_mentions: int
    expansion: str
    other_senses: list[OtherSense]
    adopted: list[AdoptedJson]
    named: bool
    consequence: ScoreJson

    def __post_init__(self) -> None:  # on conversion from a card: what the JSON presents differently
        force_setattr(self, "preset", self.preset or None)
        force_setattr(self, "preset_title", self.preset_title or None)
        force_setattr(self, "score", round(self.score, 3))

    @classmethod
    def of(cls, card: MethodCard) -> CardJson:
        return msgspec.convert(card, cls, from_attributes=True)

    @classmethod
    def builtins(cls, cards: list[MethodCard]) -> list[Json]:
        """The cards' JSON as Python values (`radar methods --json`, the dashboard's cached cards)."""
        out: list[Json] = msgspec.to_builtins([cls.of(c) for c in cards])
        return out
