"""Acronyms and their long forms: which words before "(GRPO)" spell it (their initials, else the Schwartz & Hearst
rule), and whether a long form reliably spells a short one (what tells one sense of an acronym from another)."""

from __future__ import annotations

from collections.abc import Sequence

_LINKING = frozenset(
    [
        "of",
        "for",
        "and",
        "with",
        "the",
        "in",
        "to",
        "via",
        "on",
        "a",
        "an",
        "by",
        "from",
        "over",
        "under",
        "at",
        "as",
        "or",
    ]
)


def _initials_form(letters: Sequence[str], words: Sequence[str]) -> str:
    """The shortest run of final ``words`` whose word starts (and capitals inside words: "sAmpling", parts of
    "Zero-Variance", the letters of an acronym word "RL") spell ``letters``, linking words skipped; '' when none."""
    s = len(letters) - 1
    for i in range(len(words) - 1, -1, -1):
        word = words[i].strip("\"'“”‘’")
        parts = [p for p in word.split("-") if p]
        if not parts:
            return ""
        # the letters this word can stand for, right to left: an acronym word gives each capital
        spell: list[str] = []
        for part in reversed(parts):
            caps = [ch.lower() for ch in part if ch.isupper() or ch.isdigit()]
            inner = [ch.lower() for ch in part[1:] if ch.isupper()]
            spell.extend(reversed(caps) if len(caps) > 1 and len(caps) == sum(ch.isalnum() for ch in part) else
                         [*reversed(inner), part[0].lower()])  # fmt: skip
        took = False
        for ch in spell:
            if s >= 0 and ch == letters[s]:
                s -= 1
                took = True
        if not took and word.lower() not in _LINKING:
            return ""
        if s < 0:
            return " ".join(words[i:]) if took else ""
    return ""


def spelled_by(short: str, expansion: str) -> bool:
    """Whether ``expansion`` is a reliable long form of ``short`` (what tells one sense of an acronym from
    another): its words' initials spell it ("Group Relative Policy Optimization"), or each of its few content
    words starts one of its letters, in order ("Quantum Autoencoder" for QAE); not a phrase that merely holds
    the letters ("PRM as an online training signal" for GRPO)."""
    letters = [c.lower() for c in short if c.isalnum()]
    words = expansion.split()
    if len(letters) < 2 or not words:
        return False
    if _initials_form(letters, words) == " ".join(words):
        return True
    content = [w for w in words if w.lower() not in _LINKING]
    if not content or len(content) > len(letters) or content[0][:1].lower() != letters[0]:
        return False
    at = 0
    for w in content:
        at = "".join(letters).find(w[:1].lower(), at)
        if at < 0:
            return False
        at += 1
    return True


def long_form(short: str, before: str) -> str:
    """The words before "(SHORT)" that spell it, '' when none do: their initials when they spell it
    ("Proximal Policy Optimization (PPO)"), else Schwartz & Hearst (2003).

    Schwartz & Hearst: characters of the short form are matched right to left against the text; each must be
    found, and the first one must start a word."""
    letters = [c.lower() for c in short if c.isalnum()]
    if len(letters) < 2 or not short[0].isalnum():
        return ""
    words = before.split()[-min(len(letters) + 5, len(letters) * 2) :]
    initials = _initials_form(letters, words)
    if initials and len(initials) > len(short):
        return initials.strip(" ,;:")
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
