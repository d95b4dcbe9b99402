"""Mentions of candidate names in one document: a pure function from (title, abstract) to mentions.

A candidate name is a token with at least two capitals, or a capital and a digit (GRPO, DeepSeek-R1,
Qwen2.5-7B-Instruct, H100, Fine-Tuning, vLLM). Each mention carries the evidence the kind classifier and
the adoption counts read: the words around it, an acronym's expansion ("Group Relative Policy Optimization
(GRPO)"), whether the paper introduces it ("X: a benchmark for ...", "we propose X", "X, a ..."), whether it
sits in a comparison ("outperforms X", "compared with X", "than X", "over X"), and size/variant suffixes
("-7B", "-Instruct") that mark released models.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

# a word with two capitals, or a capital and a digit (the lookahead skips plain words inside the regex engine)
_TOKEN = re.compile(r"(?<![\w\-./])(?=[\w.\-]*?[A-Z][\w.\-]*?[A-Z0-9])[A-Za-z][A-Za-z0-9]*(?:[-.][A-Za-z0-9]+)*")
_WORD = re.compile(r"[a-z][a-z0-9\-]*")
# "-7B", "-1.5B", "-Instruct", "-Chat", ...: what a released checkpoint carries after its family name
VARIANT = re.compile(
    r"(?:-(?:\d+(?:\.\d+)?[BMKbmk]|[Ii]nstruct|[Cc]hat|[Bb]ase|[Pp]review|[Tt]urbo|[Ii]t|[Ff]lash|[Pp]ro|[Mm]ini|"
    r"[Dd]istill|[Ll]arge|[Ss]mall|[Mm]edium|\d{4}))+$"
)
_SIZE = re.compile(r"-\d+(?:\.\d+)?[BMbm](?:-|$)")
_SIZE_AFTER = re.compile(r"^[\s(]*\d+(?:\.\d+)?\s?[BMbm]\b")
_INTRO_VERB = re.compile(
    r"\b(?:we|this paper|this work|here we)\s+(?:\w+ly\s+)?(?:propose|present|introduce|develop|design|release|"
    r"build|construct|curate|create|contribute|open-source|call|name)s?d?\s+(?:a\s+|an\s+|the\s+)?"
    r"(?:\w[\w\-]*\s+){0,4}?(?:called|named|dubbed|termed)?\s*$",
    re.IGNORECASE,
)
# the same verbs with only descriptive words between the verb and the name ("we propose a novel framework, X",
# "we introduce X"): a capitalised word there ("we propose Stratified GRPO", "we introduce Dr. GRPO") makes the
# name part of a longer one, which the paper introduces instead; an expansion before "(X)" is allowed
_INTRO_DIRECT = re.compile(
    r"\b(?i:we|this\s+paper|this\s+work|here\s+we)\s+(?:[a-z]+ly\s+)?(?i:propose|present|introduce|develop|"
    r"design|release|build|construct|curate|create|contribute|open-source|call|name)[sd]?\s+"
    r"(?:(?:a|an|the|our)\s+)?(?P<between>(?:[a-z][a-z\-]*,?\s+){0,4}?)"
    r"(?P<expansion>(?:[A-Z][\w\-]*\s+(?:(?:of|for|and|with|in|on|to|via)\s+)?){1,8}\(\s*)?$"
)
_DESCRIPTORS = frozenset(
    [
        "novel",
        "new",
        "simple",
        "general",
        "unified",
        "efficient",
        "effective",
        "scalable",
        "lightweight",
        "principled",
        "practical",
        "robust",
        "first",
        "open",
        "open-source",
        "comprehensive",
        "large-scale",
        "challenging",
        "dataset",
        "benchmark",
        "method",
        "framework",
        "approach",
        "algorithm",
        "technique",
        "model",
        "models",
        "system",
        "library",
        "toolkit",
        "suite",
        "family",
        "series",
        "strategy",
        "paradigm",
        "pipeline",
        "agent",
        "architecture",
        "loss",
        "objective",
        "metric",
        "called",
        "named",
        "dubbed",
        "termed",
    ]
)
# what follows an introduced name: "X, a ...", "X: ...", "X (...)", "X, which", "X that", "X - a ..."
_INTRO_AFTER = re.compile(r"^\s*(?:[,:(]|[-–—]\s|(?:is|as|which|that)\b|$)", re.IGNORECASE)
_CALLED = re.compile(r"\b(?:called|named|dubbed|termed|coined)\s*[\"'“]?$", re.IGNORECASE)
_APPOSITION = re.compile(r"^\s*(?:\([^)]{0,60}\)\s*)?[,:]\s*(?:a|an|the)\s+((?:[\w\-]+\s+){0,7}[\w\-]+)", re.IGNORECASE)
_IS_A = re.compile(r"^\s*(?:is|as)\s+(?:a|an)\s+((?:[\w\-]+\s+){0,5}[\w\-]+)", re.IGNORECASE)
# comparisons: "outperforms X", "compared with X", "than X", "over X", "vs. X", "baselines such as X", also when X
# is a later item of a list ("outperforms A, B and X")
_COMPARE = re.compile(
    r"\b(?:outperform\w*|surpass\w*|beat\w*|exceed\w*|compar\w*\s+(?:with|to|against)|against|than|over|"
    r"vs\.?|versus|baselines?(?:\s+(?:such\s+as|like|including|methods?|models?))?|relative\s+to)\s+"
    r"(?:(?:the|strong|prior|existing|standard|vanilla|popular|competitive|state-of-the-art|sota)\s+)*"
    r"(?:(?:methods?|baselines?|approaches|models?)\s+(?:such\s+as|like|including)\s+)?"
    r"(?:\(?[A-Za-z][\w\-.]*\)?(?:\s+\([^)]{0,30}\))?\s*(?:,|\band\b|\bor\b|/)\s*(?:and\s+|or\s+)?){0,6}$",
    re.IGNORECASE,
)
_NUMBER_AFTER = re.compile(r"^\s*(?:\(\s*)?(?:(?:of|by|=|:|at|is|was|to|from|up to|below|under|within)\s*)?[-+~]?\d")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s*)\W*$")
_WE = re.compile(r"\b(?:we|this paper|this work)\b", re.IGNORECASE)
_URL = re.compile(r"https?://(?:www\.)?(?:github\.com|gitlab\.com|huggingface\.co)/[^\s)\]}>\"',;]+", re.IGNORECASE)
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "for",
        "and",
        "to",
        "in",
        "on",
        "with",
        "as",
        "from",
        "by",
        "is",
        "are",
        "was",
        "be",
        "we",
        "our",
        "this",
        "that",
        "these",
        "its",
        "it",
        "via",
        "at",
        "or",
        "than",
        "which",
        "using",
        "based",
    ]
)


@dataclass(frozen=True, slots=True)
class Mention:
    """One occurrence of a candidate name in a document (the first one per surface form and document)."""

    surface: str  # as written, variant suffix included (Qwen2.5-7B-Instruct)
    family: str  # the surface without its variant suffix (Qwen2.5)
    in_title: bool
    title_prefix: bool  # the title starts with it: "X: ..." / "X - ..."
    introduced: bool  # the paper introduces it: its title starts with it, "we propose X", "... called X"
    claimed: bool  # introduced, or looser cues ("we study X, a ...", "X-Pro: ..."): evidence for the kind only
    compared: bool  # it sits in a comparison (a baseline)
    sized: bool  # a size suffix or size right after it (-7B, 7B)
    features: tuple[str, ...]  # context evidence for the kind classifier


def is_candidate(token: str) -> bool:
    rest = token[1:]
    if token.islower() or (rest.isalpha() and rest.islower()) or len(token) < 2 or len(token) > 40:
        return False  # most words: fast exits before counting capitals
    upper = sum(c.isupper() for c in token)
    if upper >= 2:
        return not (token.isupper() and len(token) > 14)  # shouting in an all-caps title
    return upper == 1 and any(c.isdigit() for c in token)


def family_of(surface: str) -> str:
    fam = VARIANT.sub("", surface)
    return fam if len(fam) >= 2 else surface


def _words(text: str, n: int, *, last: bool) -> list[str]:
    words = [w for w in _WORD.findall(text.lower()) if w not in _STOP]
    return words[-n:] if last else words[:n]


_RAW_WORD = re.compile(r"[A-Za-z][A-Za-z0-9']*")
_LINK_WORDS = frozenset(["of", "and", "for", "the", "to", "with", "in", "on", "from", "via", "by", "a", "an"])


def _expansion_shape(before: str, surface: str) -> tuple[str, ...]:
    """Whether the words before "(X)" spell out X's capitals ("Direct Preference Optimization (DPO)",
    "large language models (LLMs)": ``expanded``) and whether they are capitalised as a name (``exp_cap``)."""
    letters = [c.lower() for c in surface if c.isupper()]
    if len(letters) < 2:
        return ()
    words = _RAW_WORD.findall(before[-120:].replace("-", " "))
    i, used = len(words) - 1, []
    for letter in reversed(letters):
        while i >= 0 and words[i].lower() in _LINK_WORDS and not words[i].lower().startswith(letter):
            i -= 1
        if i < 0 or words[i][0].lower() != letter:
            return ()
        used.append(words[i])
        i -= 1
    return ("expanded", "exp_cap") if all(w[0].isupper() for w in used) else ("expanded",)


def _introduces(left: str, right: str) -> bool:
    """Whether the words around a name introduce it: "we propose (a novel method,) X, ..." or "we introduce
    Group Relative Policy Optimization (X)"; not "we propose Stratified X" (a longer name) nor "we use X"."""
    m = _INTRO_DIRECT.search(left[-160:])
    if m is None:
        return False
    if m.group("expansion"):
        if not right.lstrip().startswith(")"):
            return False
    elif _INTRO_AFTER.match(right) is None:
        return False
    between = m.group("between").replace(",", " ").split()
    return not between or between[-1] in _DESCRIPTORS


def _title_prefix(title: str) -> str:
    head = re.split(r"\s*(?::|\s[-–—]\s)\s*", title, maxsplit=1)
    return head[0].strip() if len(head) == 2 else ""


def code_links(text: str) -> list[str]:
    """GitHub, GitLab and Hugging Face URLs in a text, in order, without trailing punctuation."""
    out: list[str] = []
    for m in _URL.finditer(text):
        url = m.group().rstrip(".")
        if url not in out:
            out.append(url)
    return out


@dataclass(slots=True)
class _State:
    """What ``mentions`` gathers for one surface form while it reads the document."""

    family: str
    in_title: bool
    title_prefix: bool = False
    introduced: bool = False
    claimed: bool = False
    compared: bool = False
    sized: bool = False
    features: set[str] = field(default_factory=set)
    occurrences: int = 0


def mentions(
    title: str, abstract: str, max_per_surface: int = 3, keep: Callable[[str], bool] | None = None
) -> list[Mention]:
    """The candidate names of one document, one mention per surface form with the evidence of its first
    ``max_per_surface`` occurrences (title first, then abstract)."""
    seen: dict[str, _State] = {}
    rejected: set[str] = set()
    prefix = _title_prefix(title)
    subtitle = title[len(prefix) :].lstrip(" :-–—") if prefix else ""
    for part, text in (("t", title), ("a", abstract)):
        for m in _TOKEN.finditer(text):
            surface = m.group()
            state = seen.get(surface)
            if state is None:
                if surface in rejected:
                    continue
                if not is_candidate(surface) or (keep is not None and not keep(surface)):
                    rejected.add(surface)
                    continue
                state = seen[surface] = _State(family_of(surface), part == "t")
            if state.occurrences >= max_per_surface:
                continue
            state.occurrences += 1
            feats = state.features
            family = state.family
            start, end = m.span()
            left, right = text[max(0, start - 160) : start], text[end : end + 120]
            if surface != family:
                feats.add("variant")
            if _SIZE.search(surface[len(family) :] + "-") or _SIZE_AFTER.match(right):
                state.sized = True
                feats.add("sized")
            introduced = claimed = False
            if part == "t" and surface == prefix:
                state.title_prefix = claimed = True
                introduced = surface == family  # "LoRA-Pro: ..." introduces LoRA-Pro, not LoRA
                feats.add("title_prefix")
                feats.update("sub:" + w for w in _words(subtitle, 8, last=False))
            elif part == "t":
                feats.add("in_title")
            prev = _words(left, 2, last=True)
            nxt = _words(right, 2, last=False)
            raw_prev = left.rstrip().rsplit(None, 1)[-1].lower() if left.strip() else "^"
            feats.add("L1:" + raw_prev.strip("(\"'“"))
            if prev:
                feats.add("L:" + prev[-1])
            if len(prev) == 2:
                feats.add("L2:" + " ".join(prev))
            nxt_raw = right.lstrip()
            if nxt_raw[:1] in {",", ")", ":", ";", "."}:
                feats.add("R1:" + nxt_raw[:1])
            if nxt:
                feats.add("R:" + nxt[0])
            if _NUMBER_AFTER.match(right):
                feats.add("R:num")  # a value follows: "TTFT of 120 ms", "BLEU 32.1", "TTFT by 2.1x"
            # an acronym's expansion: "Group Relative Policy Optimization (GRPO)"
            if left.endswith("(") and right.startswith(")"):
                exp = _words(left[:-1], 4, last=True)
                feats.update("exp:" + w for w in exp)
                if exp:
                    feats.add("explast:" + exp[-1])
                feats.update(_expansion_shape(left[:-1], surface))
            if part == "a":
                if not _SENTENCE_START.search(left):
                    # capitalised inside a sentence of the abstract: a name ("the Bradley-Terry model"), where a
                    # capitalised phrase is written in lower case ("memory-efficient") outside titles
                    feats.add("abs_mid")
                app = _APPOSITION.match(right) or _IS_A.match(right)
                if app:
                    feats.update("app:" + w for w in _words(app.group(1), 6, last=False))
                after = _INTRO_AFTER.match(right) is not None
                if _CALLED.search(left[-20:]) or (_INTRO_VERB.search(left[-80:]) and after):
                    claimed = True
                    feats.add("intro_verb")
                elif app and right.lstrip()[:1] in {",", ":", "("} and _WE.search(left[-100:]):
                    claimed = True
                introduced = _CALLED.search(left[-20:]) is not None or _introduces(left, right)
            if introduced or claimed:
                state.claimed = True
            if introduced:
                state.introduced = True
            if _COMPARE.search(left[-120:]):
                state.compared = True
                feats.add("compared")
    out = []
    for surface, st in seen.items():
        if st.claimed:
            st.features.add("introduced")
        out.append(
            Mention(
                surface=surface,
                family=st.family,
                in_title=st.in_title,
                title_prefix=st.title_prefix,
                introduced=st.introduced,
                claimed=st.claimed,
                compared=st.compared,
                sized=st.sized,
                features=tuple(sorted(st.features)),
            )
        )
    return out
