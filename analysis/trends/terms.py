"""Candidate terms of one document: lowercase n-grams (1-3 words) and method names.

A pure function from text to a set of keys, so the term cache can count it once per document.

- N-grams never cross punctuation, never start or end with a stop-word or a generic word
  ("propose", "results", "novel", ...), and contain no bare numbers. Each word is folded to a
  singular form ("models" -> "model"), and hyphens split words ("test-time" -> "test time"), so
  near-duplicate spellings count as one term; :func:`surface` keeps a readable form.
- Method names keep their case and carry a leading ``@``: acronyms and named systems such as
  GRPO, DAPO, LoRA, DeepSeek-R1, FlashAttention-3 (at least two capitals, or a letter-digit
  mix after a capital). Plural acronyms fold ("LLMs" -> "LLM"); "-based"/"-style" suffixes drop.
"""

from __future__ import annotations

import functools
import re

from radar.analysis.trends.stop_words import ENGLISH_STOP_WORDS

MAX_N = 3
NAME_PREFIX = "@"


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that make an n-gram generic when they start or end it (on top of English stop-words).
GENERIC_WORDS = _wordset(
    "paper papers propose proposed proposes proposing present presents presented introduce introduces "
    "introduced introducing demonstrate demonstrates demonstrated show shows showed shown achieve "
    "achieves achieved achieving method methods approach approaches result results experiment experiments "
    "experimental extensive novel new recent recently existing various different several significant "
    "significantly effective effectively efficient efficiently based using use used uses usage work works "
    "study studies studied evaluate evaluated evaluation evaluations task tasks performance performances "
    "outperform outperforms outperforming improve improves improved improving improvement improvements "
    "state art framework frameworks address addresses problem problems challenge challenges challenging "
    "furthermore moreover however additionally respectively specifically particular particularly "
    "typically usually generally commonly widely highly largely including include includes provide "
    "provides provided enable enables enabled allowing allows allow leverage leverages leveraging "
    "leveraged utilize utilizes utilizing superior better best good high low large small key important "
    "main critical crucial comprehensive simple strong robust et al github com https http www available "
    "code publicly release released open source finally first second third paradigm way ways aspect "
    "aspects issue issues demonstrating conduct conducted conducting investigate investigates "
    "investigated explore explores explored analyze analyzes analyzed analyse analysis analyses compared "
    "compare comparison baseline baselines increasing increasingly potential promising remains remain "
    "emerging underexplored lack limited argue argues argued termed named called dubbed"
)
INNER_WORDS = frozenset({"of", "for", "and", "to", "in", "on", "with", "as", "from", "by", "the", "a"})
STOP_WORDS = frozenset(ENGLISH_STOP_WORDS) | {"vs", "ie", "eg", "etc", "can", "via", "thus", "whereas", "upon"}
# Phrases that pass the word rules but say nothing about the topic.
GENERIC_PHRASES = frozenset(
    {
        "state art",
        "large language model",
        "language model",
        "model",
        "data",
        "learning",
        "deep learning",
        "machine learning",
        "neural network",
        "real world",
        "fine tuning",
        "wide range",
        "end end",
        "trade off",
        "long term",
        "short term",
    }
)
# Capitalised tokens that are not method names (units, common acronyms and words of English titles).
NAME_STOP = frozenset(
    {
        "LLM",
        "LLMs",
        "AI",
        "NLP",
        "ML",
        "RL",
        "GPU",
        "GPUs",
        "CPU",
        "SOTA",
        "API",
        "US",
        "UK",
        "EU",
        "II",
        "III",
        "IV",
        "PhD",
        "TB",
        "GB",
        "MB",
        "KB",
        "FLOPs",
        "FLOP",
        "IoT",
        "ID",
        "OOD",
        "QA",
        "CNN",
        "RNN",
        "DNN",
        "VLM",
        "MLLM",
        "LVLM",
        "LM",
        "LMs",
        "PLM",
        "URL",
        "USA",
        "CV",
        "DL",
    }
)

_ADVERB = re.compile(r"(?:ally|ively|ously|edly|ingly|ently|antly|ately|ibly|ably|stly|ctly)$")
_CHUNK_SPLIT = re.compile(r"[.,;:!?()\[\]{}\"“”|/]+|\s[-–—]\s|\$[^$]*\$")
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’][a-z]+)?")
_NAME = re.compile(r"(?<![\w-])[A-Z][A-Za-z0-9]*(?:[-.][A-Za-z0-9]+)*")
_VARIANT = re.compile(
    r"(?:-(?:\d+(?:\.\d+)?[BMKbmk]|[Ii]nstruct|[Cc]hat|[Bb]ase|[Pp]review|[Dd]istill|[Mm]ini|"
    r"[Tt]urbo|"
    r"[Ll]arge|[Ss]mall|[Mm]edium|it|v\d+(?:\.\d+)?|\d{4}))+(?:-.*)?$"
)
_NAME_SUFFIX = re.compile(
    r"-(?:based|style|like|guided|aware|free|driven|enhanced|inspired|type|level|only|"
    r"specific|powered|tuned|trained|generated|augmented|assisted)$",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=1 << 18)  # called for every word of every n-gram: memoised per distinct word
def _generic(word: str) -> bool:
    """Stop-words, generic academic words, adverbs, and past participles ("established", "based")."""
    return (
        word in STOP_WORDS
        or word in GENERIC_WORDS
        or bool(_ADVERB.search(word))
        or (len(word) > 5 and word.endswith("ed") and not word.endswith("eed"))
    )


@functools.lru_cache(maxsize=1 << 18)
def fold(word: str) -> str:
    """A crude singular: enough to merge 'models'/'model' and 'policies'/'policy'."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "ics")):
        return word[:-1]
    return word


@functools.lru_cache(maxsize=1 << 16)
def _name_key(token: str) -> str | None:
    token = _NAME_SUFFIX.sub("", token.rstrip(".-"))
    core = token.split("-")[0]
    if len(token) < 3 or len(token) > 30 or token in NAME_STOP or core in NAME_STOP:
        return None
    upper = sum(c.isupper() for c in core)
    has_digit = any(c.isdigit() for c in token)
    if upper < 2 and not (has_digit and "-" in token) and not (upper == 1 and has_digit and len(core) > 2):
        return None
    if token.isupper() and len(token) > 12:  # shouting in an all-caps title
        return None
    if token.endswith("s") and len(token) >= 3 and token[-2].isupper():  # LLMs -> LLM, CoTs -> CoT
        token = token[:-1]
    token = _VARIANT.sub("", token)  # Qwen2.5-7B-Instruct -> Qwen2.5
    if token in NAME_STOP or token.replace("-", "").isdigit():
        return None
    return NAME_PREFIX + token


def names(text: str) -> set[str]:
    out: set[str] = set()
    for match in _NAME.finditer(text):
        key = _name_key(match.group())
        if key:
            out.add(key)
    return out


def document_terms(title: str, abstract: str, surfaces: dict[str, str] | None = None) -> set[str]:
    """Every candidate term key of one document (each counted once per document).

    ``surfaces``, when given, collects the first unfolded spelling of keys that were folded
    (only those: a key seen as itself reads as itself).
    """
    text = f"{title}. {abstract}"
    keys = names(text)
    for chunk in _CHUNK_SPLIT.split(text.replace("-", " ")):
        raw = [w.lower() for w in _WORD.findall(chunk)]
        if not raw:
            continue
        words = [fold(w) for w in raw]
        n_words = len(words)
        generic = [_generic(w) for w in words]  # once per word (each is asked up to four times below)
        digit = [w[0].isdigit() for w in words]
        for i, first in enumerate(words):
            if generic[i] or len(first) < 2 or digit[i]:
                continue
            for n in range(1, MAX_N + 1):
                j = i + n
                if j > n_words:
                    break
                if (digit[j - 1] and n > 1) or (
                    n == 3 and (digit[i + 1] or (words[i + 1] in STOP_WORDS and words[i + 1] not in INNER_WORDS))
                ):
                    break
                if generic[j - 1] or (n == 1 and len(first) < 3):
                    continue
                key = " ".join(words[i:j])
                if key in GENERIC_PHRASES:
                    continue
                keys.add(key)
                if surfaces is not None:
                    form = " ".join(raw[i:j])
                    if form != key:
                        surfaces.setdefault(key, form)
                    elif key in surfaces:
                        surfaces[key] = key
    return keys


def display(key: str, surfaces: dict[str, str]) -> str:
    """What a person reads: names without their marker, n-grams in their first-seen spelling."""
    if key.startswith(NAME_PREFIX):
        return key[1:]
    return surfaces.get(key, key)


def is_name(key: str) -> bool:
    return key.startswith(NAME_PREFIX)
