"""Seed-keyword matching: weak labels, a feature, and the keyword baseline.

Texts are split once into word and punctuation tokens; each keyword is a token sequence looked up
from its first token, so matching costs one pass per document whatever the number of keywords
(a regex alternation per tag took 80 s on 20k abstracts; this takes about 2 s). Keywords written
in capitals (acronyms: GRPO, PPO, TPU) match case-sensitively, others case-insensitively; a final
"*" matches any word ending ("quantiz*": quantization, quantized).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from radar.analysis.tags.taxonomy import Taxonomy

_TOKEN = re.compile(r"\w+|[^\w\s]")


def _is_acronym(keyword: str) -> bool:
    return keyword.upper() == keyword and any(c.isalpha() for c in keyword)


class KeywordMatcher:
    def __init__(self, taxonomy: Taxonomy) -> None:
        self.n_tags = len(taxonomy.tags)
        # first token -> [(following tokens, last one is a prefix, tag index)], one table per case mode
        self._cased: dict[str, list[tuple[tuple[str, ...], bool, int]]] = {}
        self._lower: dict[str, list[tuple[tuple[str, ...], bool, int]]] = {}
        # single-token wildcards, looked up by their first three characters
        self._prefix: dict[str, list[tuple[str, bool, int]]] = {}
        for j, tag in enumerate(taxonomy.tags):
            for keyword in tag.keywords:
                wildcard = keyword.endswith("*")
                cased = _is_acronym(keyword)
                tokens = _TOKEN.findall(keyword.rstrip("*"))
                if not cased:
                    tokens = [t.lower() for t in tokens]
                if not tokens:
                    continue
                if wildcard and len(tokens) == 1:
                    self._prefix.setdefault(tokens[0][:3].lower(), []).append((tokens[0], cased, j))
                else:
                    table = self._cased if cased else self._lower
                    table.setdefault(tokens[0], []).append((tuple(tokens[1:]), wildcard, j))

    def counts(self, text: str) -> np.ndarray:
        """Keyword hits per tag in one text."""
        out = np.zeros(self.n_tags, dtype=np.float32)
        tokens = _TOKEN.findall(text)
        lower = [t.lower() for t in tokens]
        cased, lowered, prefixes = self._cased, self._lower, self._prefix
        for i, low in enumerate(lower):  # most tokens start no keyword: three dict look-ups and on
            token = tokens[i]
            if token in cased:
                self._sequences(out, cased[token], tokens, i)
            if low in lowered:
                self._sequences(out, lowered[low], lower, i)
            candidates = prefixes.get(low[:3])
            if candidates:
                for prefix, is_cased, j in candidates:
                    if (token if is_cased else low).startswith(prefix):
                        out[j] += 1
        return out

    @staticmethod
    def _sequences(out: np.ndarray, keywords: list[tuple[tuple[str, ...], bool, int]], seq: list[str], i: int) -> None:
        """Count the keywords starting at ``seq[i]`` (their first token matched) whose following tokens match."""
        for rest, wildcard, j in keywords:
            if not rest:
                out[j] += 1
                continue
            words = seq[i + 1 : i + 1 + len(rest)]
            if (
                len(words) == len(rest)
                and tuple(words[:-1]) == rest[:-1]
                and (words[-1].startswith(rest[-1]) if wildcard else words[-1] == rest[-1])
            ):
                out[j] += 1

    def matrix(self, titles: Sequence[str], abstracts: Sequence[str]) -> np.ndarray:
        """Per document and tag: [title hits | abstract hits], shape (n, 2 * n_tags)."""
        out = np.zeros((len(titles), 2 * self.n_tags), dtype=np.float32)
        for i, (title, abstract) in enumerate(zip(titles, abstracts, strict=True)):
            out[i, : self.n_tags] = self.counts(title)
            out[i, self.n_tags :] = self.counts(abstract)
        return out
