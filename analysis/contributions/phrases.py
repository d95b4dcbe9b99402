"""Finding names of several words ("Dr. GRPO", "Expert Race") in many papers' texts: the mentions table keys names
by token, so a phrase is looked for in the texts themselves, in one pass (``papers_naming``)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from radar.analysis.contributions.table import PaperText

_RUN = re.compile(r"[^\W_]+")  # a run of letters and digits (str.isalnum), as a name's token bound sees it


def _phrases_in(text: str, by_run: dict[str, list[str]]) -> Iterator[str]:
    """The phrases (``by_run``: a phrase's first run of letters and digits -> the phrases) that ``text`` holds,
    its white space collapsed ("Dr.\nGRPO"), not right after a letter or digit: "(Dr. GRPO)", "PPO/Dr. GRPO",
    "\\textsc{Dr. GRPO}", "GRPO,Dr. GRPO", not "XDr. GRPO" (``phrase_mention`` checks the token bounds). Looked for
    only where the text holds that first run (most texts hold none of them)."""
    runs = set(_RUN.findall(text))
    if by_run.keys().isdisjoint(runs):
        return
    collapsed = " ".join(text.split())
    for run in by_run.keys() & runs:
        for phrase in by_run[run]:
            at = collapsed.find(phrase)
            while at > 0 and collapsed[at - 1].isalnum():
                at = collapsed.find(phrase, at + 1)
            if at >= 0:
                yield phrase


MAX_PATTERN = 1000  # phrases up to which one pattern of them all skips the texts holding none (``papers_naming``)
_Trie = dict[str, "_Trie"]  # a character -> the rest ("" ends a phrase)


def any_phrase(spelled: Iterable[str]) -> re.Pattern[str]:
    """A pattern found in every text that holds one of the ``spelled`` phrases (white space collapsed) once its own
    white space is collapsed: each space stands for a run of white space ("Dr.\\nGRPO"). Written as a trie ("Dynamic
    (?:Experts Search|ReAct)"), so that the regex engine tries one branch per character, not one per phrase (50
    phrases: 0.25 s over 63k texts, the runs of letters and digits of each text 1.4 s); a phrase that starts another
    stands for both (a prefilter: ``_phrases_in`` decides)."""
    trie: _Trie = {}
    for phrase in spelled:
        node = trie
        for ch in phrase:
            node = node.setdefault(ch, {})
        node[""] = {}

    def branches(node: _Trie) -> str:
        if "" in node:
            return ""
        alts = [(r"\s+" if ch == " " else re.escape(ch)) + branches(child) for ch, child in sorted(node.items())]
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return re.compile(branches(trie))


def papers_naming(papers: Iterable[PaperText], phrases: Iterable[str]) -> dict[str, list[PaperText]]:
    """Of ``papers`` (in their order), those whose title or abstract holds each phrase (case-sensitive, white space
    collapsed, not right after a letter or digit; "Method Number7" is also found in "Method Number70": the caller
    checks token bounds). For names of several words ("Dr. GRPO", "Expert Race"), which the mentions table keys by
    token only. One pass over the papers: a text that ``any_phrase``'s pattern misses is skipped, in the others its
    runs of letters and digits are looked up among the phrases' first runs (an ``instr()`` per phrase and paper in SQL
    took 15 minutes for the 2,972 phrases of the full corpus's cards)."""
    asked: dict[str, list[str]] = {}  # a phrase as matched ("Dr. GRPO") -> as asked ("Dr.  GRPO")
    for p in dict.fromkeys(phrases):
        spelled = " ".join(p.split())
        if _RUN.search(spelled):
            asked.setdefault(spelled, []).append(p)
    by_run: dict[str, list[str]] = {}
    for spelled in asked:
        first = _RUN.search(spelled)
        assert first is not None  # kept above only when it holds a run
        by_run.setdefault(first.group(), []).append(spelled)
    out: dict[str, list[PaperText]] = {}
    if not by_run:
        return out
    # up to MAX_PATTERN phrases, a text the phrases' pattern misses is skipped (it holds none of them); beyond, the
    # pattern is slower than finding each text's runs
    holds_one = any_phrase(asked).search if len(asked) <= MAX_PATTERN else None
    for paper in papers:
        texts = [t for t in (paper.title, paper.abstract) if holds_one is None or holds_one(t)]
        held = {spelled for text in texts for spelled in _phrases_in(text, by_run)}
        for spelled in held:
            for p in asked[spelled]:
                out.setdefault(p, []).append(paper)
    return out
