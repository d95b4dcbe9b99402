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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache

from radar.analysis.contributions.acronyms import long_form
from radar.analysis.contributions.acronyms import spelled_by as spelled_by  # re-exported: acronyms.py
from radar.analysis.contributions.phrases import MAX_PATTERN as MAX_PATTERN  # re-exported: phrases.py
from radar.analysis.contributions.phrases import any_phrase as any_phrase
from radar.analysis.contributions.phrases import papers_naming as papers_naming
from radar.analysis.contributions.plaintext import SYMBOLS as SYMBOLS  # re-exported: plaintext.py
from radar.analysis.contributions.plaintext import plain_text
from radar.analysis.names.extract import _TOKEN, family_of, is_candidate

# sentence ends, not after an abbreviation ("Dr. GRPO", "e.g. PPO", "et al. propose")
SENTENCE = re.compile(
    r"(?<=[.!?])(?<!\bDr\.)(?<!\bMr\.)(?<!\bvs\.)(?<!\bal\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bFig\.)(?<!\bEq\.)"
    r"(?<!\bNo\.)(?<!\bSt\.)\s+(?=[A-Z0-9(\[$\\])"
)
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
CALLED = re.compile(
    r"\b(?:called|named|dubbed|termed|coined|namely|denoted\s+(?:as|by))\s*[\"'“‘]?",
    re.IGNORECASE,
)
# a Capitalised name right after an introducing verb: "we propose Stitch, a ...", "we introduce Matryoshka SAEs, a"
_AFTER_VERB = re.compile(
    r"\s+(?:(?:a|an|the)\s+)?(?:(?:novel|new|simple|general|unified|first|lightweight)\s+)*"
    r"([A-Z][\w\-.+]*(?:\s+[A-Z0-9][\w\-.+]*){0,2})(?=\s*[,:;(]|\s+[-–—]{1,2}\s|\s+(?:which|that|is|as|to|for|with)\b)"
)
# "our proposed architecture, Gated DeltaNet, ...": a name in apposition to "our (proposed) <noun>"
# (a proposal word is required: "our model, Qwen2.5-Math-7B" and "our optimizer, AdamW, is tuned" name what the paper
# uses; the noun in lower case: "our Model Factory" is a name of its own, not "our model, Factory")
_OUR_NAMED = re.compile(
    r"\b[Oo]ur\s+(?:proposed|new|novel|resulting)\s+(?:method|model|architecture|framework|approach|algorithm|system|"
    r"technique|scheme|design|kernel|library|optimizer|recipe|objective|loss),?\s+(?:(?:called|named|dubbed|termed)\s+)?"
    r"([A-Z][\w\-.+]*(?:\s+[A-Z0-9][\w\-.+]*){0,2})(?=\s*[,:;(]|\s+[-–—]{1,2}\s|\s+(?:which|that|achieves)\b)"
)
# a title's capitalised runs ("Min-p Sampling", "Explained Variance Adaptation"; linking words inside)
_TITLE_RUN = re.compile(r"[A-Z0-9][\w\-.+]*(?:\s+(?:(?:of|for|and|via|with|in)\s+)?[A-Z0-9][\w\-.+]*){1,3}")
_LEAD_IN = re.compile(
    r"\s*(?:(?:a|an|the)\s+)?(?:(?:novel|new|simple|general|unified|lightweight|method,?|approach,?)\s+)*"
)
_CLAUSE_END = re.compile(r"\s*[,:;(]|\s+[-–—]{1,2}\s|\s+(?:which|that|is|as|to|for|with)\b|\s*$")
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
# "our (proposed) X"; not "our analysis reveals that X"
_OUR = re.compile(
    r"\bour\s+(?:(?!(?:that|which|is|are|was|and|to|reveal|show|find|found|demonstrat|suggest|indicat|confirm|"
    r"highlight)\w*\s)[\w\-]+\s+){0,3}$",
    re.IGNORECASE,
)
# after the name (or the ")" closing "Long Form (NAME)"): ", a ...", " -- the ...", " is a ..."
_APPOSITION = re.compile(r"^\)?\s*(?:\([^)]{0,80}\)\s*)?(?:,|:|\s[-–—]{1,2})\s*(?:a|an|the)\s+", re.IGNORECASE)
_IS_A = re.compile(r"^\)?\s*(?:\([^)]{0,80}\)\s*)?(?:is|as)\s+(?:a|an)\s+", re.IGNORECASE)
_PAREN = re.compile(r"\(([^()]{1,40})\)")
_PREV_WORD = re.compile(r"\b([A-Za-z]{2,12})[,:]?\s+$")
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
_GERUND = re.compile(r"[A-Z][a-z]{2,}ing")


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
    if len(words) > 1 and _GERUND.fullmatch(words[0]):  # "Understanding R1-Zero-Like Training: ..." describes
        return ""
    return head


_HANDLE_SPLIT = re.compile(r"\s*(?::|\?|\s[-\u2013\u2014]\s)\s*")
_HANDLE_CUT = re.compile(r"\s+(?:for|via|with|in|on|of|from|through|using|by|to|towards?)\s+", re.IGNORECASE)
MAX_HANDLE_WORDS = 6


def title_handle(title: str) -> str:
    """A short handle for a paper that names nothing (a finding or recipe): its title's head before ":" or "?"
    ("Tricks or Traps"), else the title up to its first linking word ("Binary Classifier Optimization" of
    "Binary Classifier Optimization for Large Language Model Alignment"), at most six words."""
    text = " ".join(plain_text(title).split())
    parts = [p for p in _HANDLE_SPLIT.split(text, maxsplit=1) if p.strip()]
    head = parts[0] if parts else text
    words = head.split()
    for cut in _HANDLE_CUT.finditer(head) if len(words) > 2 else ():
        if sum(w.lower() not in ("the", "a", "an") for w in head[: cut.start()].split()) >= 2:
            head = head[: cut.start()]
            break
    return " ".join(head.split()[:MAX_HANDLE_WORDS]).strip(" ,.;\"'“”")


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


def _joined(ch: str) -> bool:
    """Whether a character next to a name would make it part of a longer token (GRPO in NGRPO or Tree-GRPO)."""
    return ch.isalnum() or ch in "-_+"


def _find_all(text: str, needle: str, inside: Sequence[tuple[int, int]] = ()) -> list[int]:
    """Start of every occurrence of ``needle`` as a whole token: not part of a longer token (GRPO in NGRPO,
    Tree-GRPO or Qwen2.5-7B) nor inside one of the ``inside`` spans (GRPO in "Dr. GRPO")."""
    out, at, n = [], text.find(needle), len(needle)
    while at >= 0:
        end = at + n
        before = text[at - 1] if at else " "
        after = text[end] if end < len(text) else " "
        if after == "." and end + 1 < len(text) and text[end + 1].isalnum():
            after = "a"  # "2.5", "e.g": the token goes on
        if not _joined(before) and not _joined(after) and not any(s <= at and end <= e for s, e in inside):
            out.append(at)
        at = text.find(needle, end)
    return out


def _ends_near(ends: list[int], p: int, lo: int) -> bool:
    """Whether a (sorted) cue end lies in [lo, p]."""
    i = bisect_right(ends, p) - 1
    return i >= 0 and ends[i] >= lo


def _sentence_bounds(text: str) -> list[int]:
    return [0, *(m.end() for m in SENTENCE.finditer(text))]


@cache
def _cased(rx: re.Pattern[str]) -> re.Pattern[str]:
    return re.compile(rx.pattern, rx.flags & ~re.IGNORECASE)


def _finditer(rx: re.Pattern[str], text: str, lowered: str) -> Iterator[re.Match[str]]:
    """The matches of ``rx`` (case-insensitive, its literals lower-case) in ``text``, found case-sensitively in
    ``lowered`` (``text.lower()``) when that keeps every position and holds no letter that ``re.IGNORECASE``
    matches to an ASCII one but ``lower()`` keeps ("ı" for i, "ſ" for s): the same matches, 2-2.5x faster than
    ``re.IGNORECASE`` on abstracts."""
    if len(lowered) == len(text) and "ı" not in lowered and "ſ" not in lowered:
        return _cased(rx).finditer(lowered)
    return rx.finditer(text)


def extract(title: str, abstract: str) -> Extracted:
    """The candidates of one paper (title first, then abstract) with their features."""
    title = plain_text(title)
    abstract = plain_text(abstract)
    text = f"{title}\n{abstract}"
    t_end = len(title)
    lowered = text.lower()
    low_abstract = lowered[t_end + 1 :] if len(lowered) == len(text) else abstract.lower()
    cands: dict[str, Candidate] = {}

    def add(surface: str, pos: int, *feats: str) -> Candidate:
        surface = SENTENCE.split(surface, maxsplit=1)[0].strip(" .,;:")  # a run of capitals stops at a sentence's end
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
    for m in _finditer(INTRO, abstract, low_abstract):
        end = m.end()
        stop = abstract.find(". ", end)
        stop = min(stop if stop >= 0 else len(abstract), end + 220)
        windows.append((t_end + 1 + end, t_end + 1 + stop, m.group(1).lower()[:5]))
        after = _AFTER_VERB.match(abstract, end)
        if after:
            add(after.group(1), t_end + 1 + after.start(1), "src:after_verb")
    for m in _OUR_NAMED.finditer(abstract):  # "our proposed architecture, Gated DeltaNet, ...": as "we propose X"
        add(m.group(1), t_end + 1 + m.start(1), "src:after_verb", "after_our", "apposition", "intro&apposition")
        windows.append((t_end + 1 + m.start(1), t_end + 1 + m.end(1), "propo"))
    for m in _finditer(CALLED, abstract, low_abstract):
        caps = _CAPS_RUN.match(abstract, m.end())
        if caps:
            add(_CONNECTOR_TAIL.sub("", caps.group()), t_end + 1 + caps.start(), "src:called")
    # a name the title capitalises and the abstract introduces in lower case ("Min-p Sampling" of the title,
    # "we propose min-p sampling, a ..."): the title's spelling, found where the introducing verb is
    runs = [r.group() for r in _TITLE_RUN.finditer(title)]
    lowercase_named: set[str] = set()  # the title's names the abstract introduces in lower case
    if runs and windows:
        for wstart, _, _ in windows:
            lead = _LEAD_IN.match(text, wstart)
            at = lead.end() if lead else wstart
            head = lowered[at : at + 60]
            for title_run in runs:
                parts = title_run.split()
                for n in range(len(parts), 1, -1):  # the longest run of the title's words the verb introduces
                    sub = " ".join(parts[:n])
                    if head.startswith(sub.lower()) and _CLAUSE_END.match(head, len(sub)):
                        add(sub, title.find(sub), "src:title_lower")
                        lowercase_named.add(sub)
                        break
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
    compares = [(m.end(), m.group().lower()[:7]) for m in _finditer(COMPARE, text, lowered)]
    lineages = [(m.end(), m.group().lower()[:6]) for m in _finditer(LINEAGE, text, lowered)]
    compare_ends = [e for e, _ in compares]
    lineage_ends = [e for e, _ in lineages]
    title_lower = title.lower()
    # where the names of several words stand, so that the tokens inside them ("GRPO" of "Dr. GRPO") do not
    # take their evidence
    phrases = [c.surface for c in cands.values() if " " in c.surface]
    for c in cands.values():
        c.features.update(_shape(c.surface))
        spans = [(p, p + len(o)) for o in phrases if o != c.surface and c.surface in o for p in _find_all(text, o)]
        occurrences = _find_all(text, c.surface, spans)
        if c.surface in lowercase_named and len(lowered) == len(text) and not any(p > t_end for p in occurrences):
            # "Aligned Probing: ..." of the title, "we introduce aligned probing, a ..." of the abstract (only for a
            # name the verb introduces: a title phrase the abstract merely mentions is not the paper's name)
            occurrences = sorted({*occurrences, *_find_all(lowered, c.surface.lower())})
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
            near_verb = False
            # "we introduce Long Form (NAME)": the name stands where its long form starts
            at = p - len(c.expansion) - 2 if c.expansion and text.endswith(c.expansion + " (", 0, p) else p
            for wstart, wend, verb in windows:
                if wstart <= p < wend:
                    words = len(text[wstart:at].split())
                    near_verb = near_verb or words <= 8
                    c.features.add("intro:" + ("0-2" if words <= 2 else "3-8" if words <= 8 else "9+"))
                    c.features.add("verb:" + verb)
            if _ends_near(compare_ends, p, max(sent_start, p - 89)):
                c.features.add("compared")
                c.features.add("cmp:" + compares[bisect_right(compare_ends, p) - 1][1])  # cmp:outperf, cmp:such
            if _ends_near(lineage_ends, p, max(sent_start, p - 39)):
                c.features.add("lineage")
                c.features.add("lin:" + lineages[bisect_right(lineage_ends, p) - 1][1])  # lin:based, lin:extend
            prev = _PREV_WORD.search(text, max(0, p - 24), p)
            if prev:
                c.features.add("prev:" + prev.group(1).lower())  # "on GSM8K", "than PPO", "of GRPO"
            left, right = text[max(0, p - 60) : p], text[p + len(c.surface) : p + len(c.surface) + 90]
            if "our" in left.lower() and _OUR.search(left):  # the substring test skips most regex runs
                c.features.add("after_our")
            if _APPOSITION.match(right):
                c.features.add("apposition")
                if near_verb:  # "we propose X, a ...": the introduction's own shape
                    c.features.add("intro&apposition")
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
            # most of the long form's words (LoRA's "low-rank adaptation" is not in "... Explained Variance
            # Adaptation")
            if exp_words and sum(w in title_lower for w in exp_words) >= max(1, -(-2 * len(exp_words) // 3)):
                c.features.add("expansion_in_title")
        if prefix and c.surface != prefix and c.surface in prefix:
            c.features.add("inside_prefix")
    ordered = sorted(cands.values(), key=lambda c: c.start)
    return Extracted(tuple(ordered), paper_features(title, abstract, prefix, low_abstract), text, t_end)


def paper_features(title: str, abstract: str, prefix: str, lowered: str = "") -> frozenset[str]:
    """Cues of the whole paper: a survey or study, what "we" do, whether the title has a name prefix
    (``lowered``: ``abstract.lower()`` when the caller has it)."""
    lowered = lowered or abstract.lower()
    f = {"p:bias"}
    if prefix:
        f.add("p:prefix")
    rest = title[len(prefix) :] if prefix else title
    f.update("p:t:" + m.group().lower() for m in _SURVEY.finditer(rest))
    f.update("p:we:" + m.group(1).lower()[:6] for m in _finditer(_WE_VERB, abstract, lowered))
    if next(_finditer(INTRO, abstract, lowered), None) is not None:
        f.add("p:intro_verb")
    if next(_finditer(CALLED, abstract, lowered), None) is not None:
        f.add("p:called")
    return frozenset(f)


def phrase_mention(title: str, abstract: str, phrase: str) -> tuple[bool, bool]:
    """(names it, compares against it): whether a paper's text holds ``phrase`` as whole tokens ("Dr. GRPO",
    "Expert Race": names the mentions table, keyed by token, cannot look up), and whether one of those
    occurrences sits in a comparison ("outperforms Dr. GRPO"), by the rule candidates use."""
    text = f"{plain_text(title)}\n{plain_text(abstract)}"
    found = _find_all(text, phrase)
    if not found:
        return False, False
    bounds = _sentence_bounds(text)
    ends = [m.end() for m in _finditer(COMPARE, text, text.lower())]
    compared = any(_ends_near(ends, p, max(bounds[bisect_right(bounds, p) - 1], p - 89)) for p in found)
    return True, compared
