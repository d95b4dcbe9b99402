"""Acronyms and their long forms, read off the corpus: "Group Relative Policy Optimization (GRPO)".

A lead types RL, MoE, DPO, KV or PRM; papers often write the long form and the acronym once. The table maps each
short form (lower case, singular) to the long forms the corpus gives it, so a query's acronym also matches a paper
that spells it out, and the dense query carries the words the embedding model knows. The long form is the run of
words before the parenthesis whose letters spell the short form (after Schwartz and Hearst, PSB 2003: the first
letter starts the first word, the others appear in order); a long form must make up at least ``MIN_SHARE`` of its
short form's definitions and be seen ``MIN_SEEN`` times, so an acronym with two common meanings (TTS:
text-to-speech and test-time scaling) keeps both and a one-off does not count."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable

MIN_SEEN = 2
MIN_SHARE = 0.25
_SHORT = re.compile(r"\(([A-Za-z][A-Za-z0-9\-]{0,9}?)s?\)")
_WORD = re.compile(r"[A-Za-z][\w\-]*")
_LEADING = frozenset({"a", "an", "the", "of", "and", "or", "for", "to", "in", "on", "with", "by", "via", "as", "like"})
_LEADING |= {"such", "using", "use", "show", "called", "named", "termed", "dubbed", "including", "from", "that"}


def _is_acronym(short: str) -> bool:
    """Two capitals (RL, MoE, KV) or a capital and a digit (FP8): not a parenthesised word or number."""
    return sum(c.isupper() for c in short) >= 2 or (short[0].isupper() and any(c.isdigit() for c in short))


def long_form(before: str, short: str) -> str | None:
    """The long form that ends right before ``(short)``, lower case, hyphens as spaces; None if none spells it."""
    letters = [c for c in short.lower() if c.isalpha()]
    if len(letters) < 2:
        return None
    words = _WORD.findall(before[-160:])
    found = None
    for n in range(1, min(len(words), len(letters) + 2) + 1):
        cand = words[-n:]
        if cand[0][0].lower() != letters[0]:
            continue
        text, at = " ".join(cand).lower(), 0
        for ch in letters:  # every letter, in order, somewhere in the candidate
            at = text.find(ch, at) + 1
            if not at:
                break
        else:
            initials = sum(1 for w in cand for p in w.split("-") if p)
            if abs(initials - len(letters)) <= 1:
                found = text
                if initials >= len(letters):
                    break
    if found is None:
        return None
    words = found.replace("-", " ").split()
    while words and words[0] in _LEADING:
        words = words[1:]
    return " ".join(words) or None


def mine(texts: Iterable[str]) -> dict[str, list[str]]:
    """Short form -> its long forms (most common first) over ``texts``."""
    seen: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for text in texts:
        for m in _SHORT.finditer(text):
            short = m.group(1)
            if _is_acronym(short) and (lf := long_form(text[: m.start()], short)):
                seen[short.lower()][lf] += 1
    table: dict[str, list[str]] = {}
    for short, forms in seen.items():
        total = sum(forms.values())
        kept = [lf for lf, n in forms.most_common() if n >= MIN_SEEN and n / total >= MIN_SHARE]
        if kept:
            table[short] = kept
    return table


def expand(table: dict[str, list[str]], word: str) -> list[str]:
    """Long forms of ``word`` (an acronym in the table, singular or plural: LLMs as LLM), else []."""
    word = word.lower()
    return table.get(word) or (table.get(word[:-1], []) if word.endswith("s") else [])
