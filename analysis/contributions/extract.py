"""What one paper could be introducing: candidate names with the evidence around each, and the rule baseline.

A pure function of (title, abstract). Candidates come from
- the title's prefix ("QAE: ...", "Expert Race - ..."),
- name-like tokens (two capitals, or a capital and a digit: GRPO, Tree-GRPO, Qwen2.5-7B; ``names.extract``),
- acronym definitions, matched by the Schwartz-Hearst rule ("Group Sequence Policy Optimization (GSPO)"),
- the words right after an introducing verb ("we propose Stitch, a ...", "dubbed Subspace Gradient").
Each carries string features the learned ranker reads (``model.py``): where it came from, how far it sits
from "we propose", whether it sits in a comparison ("outperforms X") or a lineage ("based on X"), its shape.
Paper-level cues (a survey, "we study", "we propose") come separately (``paper_features``).

``rule_contribution`` is the plain baseline: the title's prefix, else the first name right after "we propose".
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field

from radar.analysis.names.extract import _TOKEN, family_of, is_candidate

SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[$\\])")
_WORD = re.compile(r"[a-z][a-z0-9]+")
# "we propose", "this paper introduces", "here we present", "we further develop" (the verb's stem is kept)
INTRO = re.compile(
    r"\b(?:we|this\s+(?:paper|work|study|article|letter)|our\s+(?:work|paper)|here)\s*,?\s+"
    r"(?:(?:also|further|first|then|therefore|thus|hence|newly|additionally|finally|instead)\s+)?(?:\w+ly\s+)?"
    r"(propos|present|introduc|develop|design|releas|build|construct|curat|creat|contribut|open-sourc|unveil|"
    r"offer|devis|formulat|establish|describ|call|nam|dub|term|coin|put\s+forward)\w*",
    re.IGNORECASE,
)
_PASSIVE_WORDS = ("proposed", "introduced", "presented", "developed")
_PASSIVE = re.compile(r"\b(?:is|are|was|were)\s+(?:\w+ly\s+)?(?:proposed|introduced|presented|developed)\b", re.I)
CALLED = re.compile(r"\b(?:called|named|dubbed|termed|coined|namely|denoted\s+(?:as|by))\s*[\"'“‘]?", re.IGNORECASE)
# a Capitalised name right after an introducing verb: "we propose Stitch, a ...", "we introduce Matryoshka SAEs, a"
_AFTER_VERB = re.compile(
    r"\s+(?:(?:a|an|the)\s+)?(?:(?:novel|new|simple|general|unified|first|lightweight)\s+)*"
    r"([A-Z][\w\-.+]*(?:\s+[A-Z0-9][\w\-.+]*){0,2})(?=\s*[,:;(]|\s+[-–—]{1,2}\s|\s+(?:which|that|is|as|to|for|with)\b)"
)
_CAPS_RUN = re.compile(r"[A-Z][\w\-.+]*(?:\s+(?:[A-Z0-9][\w\-.+]*|of|for|and|via)){0,3}")
_CONNECTOR_TAIL = re.compile(r"(?:\s+(?:of|for|and|via))+$")
COMPARE = re.compile(
    r"\b(?:outperform\w*|surpass\w*|beat\w*|exceed\w*|compar\w*\s+(?:\w+\s+)?(?:with|to|against)|against|than|over|vs\.?|"
    r"versus|baselines?|relative\s+to|such\s+as|like|including)\b",
    re.IGNORECASE,
)
LINEAGE = re.compile(
    r"\b(?:based\s+on|built\s+(?:up)?on|builds?\s+(?:up)?on|extend\w*|on\s+top\s+of|inspired\s+by|variant\s+of|"
    r"improv\w*\s+(?:up)?on|generaliz\w+|replac\w+|modif\w+|adapt\w*|augment\w*|within|into|of)\b",
    re.IGNORECASE,
)
_OUR = re.compile(r"\bour\s+(?:[\w\-]+\s+){0,3}$", re.IGNORECASE)
_APPOSITION = re.compile(r"^\s*(?:\([^)]{0,80}\)\s*)?(?:,|:|\s[-–—]{1,2})\s*(?:a|an|the)\s+", re.IGNORECASE)
_IS_A = re.compile(r"^\s*(?:\([^)]{0,80}\)\s*)?(?:is|as)\s+(?:a|an)\s+", re.IGNORECASE)
_PAREN = re.compile(r"\(([^()]{1,40})\)")
_LAST_TOKEN = re.compile(r"([A-Za-z][\w\-.+]*)\s*$")
_SHORT_FORM = re.compile(r"[A-Za-z][\w\-.+&]*[A-Za-z0-9+]|[A-Z]")
_PREFIX_SPLIT = re.compile(r"\s*(?::(?=\s)|\s[-–—]{1,2}\s)\s*|:(?=[A-Z]\w*\s+[a-z])")
_SURVEY = re.compile(
    r"\b(?:survey|review|overview|tutorial|position|perspective|primer|lessons|roadmap|revisit\w*|rethink\w*|"
    r"understanding|empirical|analysis|analy[sz]ing|investigat\w*|study|studies|case|towards?|comparison|"
    r"benchmarking|evaluating|evaluation|challenges|opportunities|vision)\b",
    re.IGNORECASE,
)


def _split(text: str) -> list[str]:
    return text.split()


_WE_VERB = re.compile(r"\b(?:we|this\s+(?:paper|work|study))\s+(?:\w+ly\s+)?([a-z]{3,})", re.IGNORECASE)
_GENERIC_PREFIX = frozenset(
    _split(
        "survey review position tutorial overview perspective introduction background a an the why how what when "
        "towards toward beyond rethinking revisiting"
    )
)
MAX_PREFIX_WORDS = 4


@dataclass(slots=True)
class Candidate:
    """One surface form that could be the paper's name, and what the text says around it."""

    surface: str
    start: int  # first position in title + "\n" + abstract
    count: int = 0
    features: set[str] = field(default_factory=set)
    expansion: str = ""  # the long form when the abstract defines it as an acronym


@dataclass(frozen=True, slots=True)
class Extracted:
    """The candidates of one paper and the paper's own cues."""

    candidates: tuple[Candidate, ...]
    paper: frozenset[str]  # paper-level features
    text: str  # title + "\n" + abstract, the positions' reference
    title_len: int


def title_prefix(title: str) -> str:
    """The title's head before ":" or " - " when it is short enough to be a name ('' otherwise)."""
    parts = _PREFIX_SPLIT.split(title.strip(), maxsplit=1)
    if len(parts) != 2 or not parts[1]:
        return ""
    head = parts[0].strip().strip("\"'“”")
    words = head.split()
    if not words or len(words) > MAX_PREFIX_WORDS or words[0].lower() in _GENERIC_PREFIX or not head[0].isalnum():
        return ""
    return head


def long_form(short: str, before: str) -> str:
    """Schwartz & Hearst (2003): the words before "(SHORT)" that spell it, '' when none do.

    Characters of the short form are matched right to left against the text; each must be found, and the
    first one must start a word."""
    letters = [c.lower() for c in short if c.isalnum()]
    if len(letters) < 2 or not short[0].isalnum():
        return ""
    words = before.split()[-min(len(letters) + 5, len(letters) * 2) :]
    text = " ".join(words)
    s, lf = len(letters) - 1, len(text) - 1
    while s >= 0:
        c = letters[s]
        while lf >= 0 and (text[lf].lower() != c or (s == 0 and lf > 0 and text[lf - 1].isalnum())):
            lf -= 1
        if lf < 0:
            return ""
        s -= 1
        lf -= 1
    start = text.rfind(" ", 0, lf + 1) + 1
    out = text[start:].strip(" ,;:")
    return out if len(out) > len(short) else ""


def _shape(surface: str) -> set[str]:
    f = set()
    letters = [c for c in surface if c.isalpha()]
    if " " in surface:
        f.add("shape:multiword")
    if surface[:1].islower():
        f.add("shape:lower_initial")
    if letters and all(c.isupper() for c in letters):
        f.add("shape:allcaps")
    elif sum(c.isupper() for c in surface) >= 2:
        f.add("shape:mixedcase")
    else:
        f.add("shape:one_capital")
    if any(c.isdigit() for c in surface):
        f.add("shape:digit")
    if "-" in surface:
        f.add("shape:hyphen")
    if family_of(surface) != surface:
        f.add("shape:variant")
    n = len(surface)
    f.add("len:" + ("short" if n <= 3 else "mid" if n <= 6 else "long"))
    return f


def _find_all(text: str, needle: str) -> list[int]:
    """Start of every non-overlapping occurrence of ``needle``."""
    out, at = [], text.find(needle)
    while at >= 0:
        out.append(at)
        at = text.find(needle, at + len(needle))
    return out


def _ends_near(ends: list[int], p: int, lo: int) -> bool:
    """Whether a (sorted) cue end lies in [lo, p]."""
    i = bisect_right(ends, p) - 1
    return i >= 0 and ends[i] >= lo


def _sentence_bounds(text: str) -> list[int]:
    return [0, *(m.end() for m in SENTENCE.finditer(text))]


def extract(title: str, abstract: str) -> Extracted:
    """The candidates of one paper (title first, then abstract) with their features."""
    title = " ".join(title.split())
    abstract = " ".join(abstract.split())
    text = f"{title}\n{abstract}"
    t_end = len(title)
    cands: dict[str, Candidate] = {}

    def add(surface: str, pos: int, *feats: str) -> Candidate:
        surface = surface.strip(" .,;:")
        c = cands.get(surface)
        if c is None:
            c = cands[surface] = Candidate(surface, pos)
        c.features.update(feats)
        return c

    prefix = title_prefix(title)
    if prefix:
        add(prefix, 0, "src:prefix", f"prefix_words:{min(len(prefix.split()), 3)}")
    # intro windows: (start, end, verb) after each introducing verb, to the end of its clause
    windows: list[tuple[int, int, str]] = []
    for m in INTRO.finditer(abstract):
        end = m.end()
        stop = abstract.find(". ", end)
        stop = min(stop if stop >= 0 else len(abstract), end + 220)
        windows.append((t_end + 1 + end, t_end + 1 + stop, m.group(1).lower()[:5]))
        after = _AFTER_VERB.match(abstract, end)
        if after:
            add(after.group(1), t_end + 1 + after.start(1), "src:after_verb")
    for m in CALLED.finditer(abstract):
        run = _CAPS_RUN.match(abstract, m.end())
        if run:
            add(_CONNECTOR_TAIL.sub("", run.group()), t_end + 1 + run.start(), "src:called")
    # acronym definitions: "Long Form Words (LFW)"
    for m in _PAREN.finditer(text):
        inner = m.group(1).split(";")[0].split(",")[0].strip()
        short = _SHORT_FORM.fullmatch(inner)
        if not short or sum(c.isupper() for c in inner) < 1 or " " in inner:
            continue
        lf = long_form(inner, text[max(0, m.start() - 200) : m.start()])
        if lf:
            c = add(inner, m.start(1), "src:defined")
            if not c.expansion:
                c.expansion = lf
            continue
        # the other order: "RLCR (Reinforcement Learning with Calibration Rewards)"
        before = _LAST_TOKEN.search(text, max(0, m.start() - 40), m.start())
        if before and is_candidate(before.group(1)) and long_form(before.group(1), inner):
            c = add(before.group(1), before.start(1), "src:defined", "defined_after")
            if not c.expansion:
                c.expansion = m.group(1)
    for m in _TOKEN.finditer(text):
        s = m.group()
        if s in cands or is_candidate(s):
            c = add(s, m.start(), "src:token")
    bounds = _sentence_bounds(text)
    compare_ends = [m.end() for m in COMPARE.finditer(text)]
    lineage_ends = [m.end() for m in LINEAGE.finditer(text)]
    title_lower = title.lower()
    for c in cands.values():
        c.features.update(_shape(c.surface))
        occurrences = _find_all(text, c.surface)
        c.count = len(occurrences)
        first_abs = next((p for p in occurrences if p > t_end), -1)
        if occurrences and occurrences[0] < t_end:
            c.features.add("in_title")
        if first_abs >= 0:
            n_abs = sum(p > t_end for p in occurrences)
            c.features.add("abs_count:" + ("1" if n_abs == 1 else "2" if n_abs == 2 else "3+"))
            sent = bisect_right(bounds, first_abs) - 1
            c.features.add("first_sent:" + ("0" if sent <= 1 else "1-3" if sent <= 3 else "4+"))
        else:
            c.features.add("abs_count:0")
        for p in occurrences[:4]:
            sent_start = bounds[bisect_right(bounds, p) - 1]
            for wstart, wend, verb in windows:
                if wstart <= p < wend:
                    words = len(text[wstart:p].split())
                    c.features.add("intro:" + ("0-2" if words <= 2 else "3-8" if words <= 8 else "9+"))
                    c.features.add("verb:" + verb)
            if _ends_near(compare_ends, p, max(sent_start, p - 89)):
                c.features.add("compared")
            if _ends_near(lineage_ends, p, max(sent_start, p - 39)):
                c.features.add("lineage")
            left, right = text[max(0, p - 60) : p], text[p + len(c.surface) : p + len(c.surface) + 90]
            if "our" in left.lower() and _OUR.search(left):  # the substring test skips most regex runs
                c.features.add("after_our")
            if _APPOSITION.match(right):
                c.features.add("apposition")
            elif _IS_A.match(right):
                c.features.add("is_a")
            if right.startswith(":") and p < t_end:
                c.features.add("title_colon")
            head = right[:60]
            if any(w in head.lower() for w in _PASSIVE_WORDS) and _PASSIVE.search(head):
                c.features.add("passive_intro")
        if c.expansion:
            long_c = cands.get(c.expansion)
            if long_c is not None:
                long_c.features.add("long_of_defined")
            if prefix and (c.expansion == prefix or c.expansion.lower() in prefix.lower()):
                c.features.add("short_of_prefix")
                if prefix in cands:
                    cands[prefix].features.add("prefix_has_short")
            exp_words = set(_WORD.findall(c.expansion.lower()))
            if exp_words and sum(w in title_lower for w in exp_words) >= max(1, len(exp_words) // 2):
                c.features.add("expansion_in_title")
        if prefix and c.surface != prefix and c.surface in prefix:
            c.features.add("inside_prefix")
    ordered = sorted(cands.values(), key=lambda c: c.start)
    return Extracted(tuple(ordered), paper_features(title, abstract, prefix), text, t_end)


def paper_features(title: str, abstract: str, prefix: str) -> frozenset[str]:
    """Cues of the whole paper: a survey or study, what "we" do, whether the title has a name prefix."""
    f = {"p:bias"}
    if prefix:
        f.add("p:prefix")
    rest = title[len(prefix) :] if prefix else title
    f.update("p:t:" + m.group().lower() for m in _SURVEY.finditer(rest))
    f.update("p:we:" + m.group(1).lower()[:6] for m in _WE_VERB.finditer(abstract))
    if INTRO.search(abstract):
        f.add("p:intro_verb")
    if CALLED.search(abstract):
        f.add("p:called")
    return frozenset(f)
