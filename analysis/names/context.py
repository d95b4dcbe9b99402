"""Context vectors: what the sentence encoder makes of the words around a name's mentions.

For a name, up to ``SNIPPETS`` documents (its introducing paper first, the rest spread evenly over its
documents in publication order) each give one snippet: the ``SNIPPET_WORDS`` words around its first mention
there, the name replaced by ``X`` ("... we evaluate on X and find that ..."), so the encoder reads the role,
not the spelling. The snippets are embedded with the injected ``Embed`` (the packaged all-MiniLM-L6-v2 as the
composition root builds it) and averaged into one unit vector per name. Nothing here reads a label.

Cost: the encoder reads about 9,000 tokens/s on one core; a snippet is about 16 tokens, so only names the
evidence alone leaves unsure (``kinds.CONTEXT_GATE``) are embedded (measured in docs/names.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from radar.analysis.names.aliases import key_of
from radar.analysis.names.evidence import Corpus, Evidence
from radar.analysis.names.extract import _TOKEN, family_of, is_candidate

Embed = Callable[[Sequence[str]], np.ndarray]  # texts -> L2-normalised vectors, one row per text

SNIPPETS = 8  # documents per name (measured: 3-4 gain nothing beyond the fold-to-fold spread, 8-16 do)
SNIPPET_WORDS = 10  # words around the mention (5 each side)
MASK = "X"
_SPACE = re.compile(r"\s+")


def pick_documents(ev: Evidence, k: int = SNIPPETS) -> list[int]:
    """The introducing document (if any) and documents spread evenly over the rest, at most ``k``."""
    intro = ev.claim_docs[:1] if k > 1 else []
    rest = [d for d in ev.docs if d not in intro]
    room = k - len(intro)
    if len(rest) > room:
        step = len(rest) / room
        rest = [rest[int(i * step)] for i in range(room)]
    return intro + rest


def snippet(corpus: Corpus, ev: Evidence, text: str, words: int = SNIPPET_WORDS) -> str | None:
    """The words around the first mention of ``ev`` in ``text``, the name masked; None if not found."""
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if not is_candidate(tok):
            continue
        if ev.key in (corpus.lookup.get(key_of(family_of(tok))), corpus.lookup.get(key_of(tok))):
            start, end = m.span()
            half = words // 2
            left, right = _SPACE.split(text[:start].strip()), _SPACE.split(text[end:].strip())
            return " ".join([*left[-half:], MASK, *right[:half]]).strip()
    return None


def snippets(corpus: Corpus, ev: Evidence, k: int = SNIPPETS, words: int = SNIPPET_WORDS) -> list[str]:
    out = []
    for d in pick_documents(ev, k):
        title, abstract = corpus.texts[d]
        found = snippet(corpus, ev, f"{title}. {abstract}", words)
        if found:
            out.append(found)
    return out


def context_vectors(corpus: Corpus, keys: Sequence[str], embed: Embed) -> np.ndarray:
    """One unit vector per name key (zeros when no snippet was found), from the mean of its snippets."""
    per = [snippets(corpus, corpus.names[k]) for k in keys]
    flat = [s for p in per for s in p]
    vectors = np.asarray(embed(flat), dtype=np.float32) if flat else np.zeros((0, 0), dtype=np.float32)
    dim = vectors.shape[1] if len(flat) else 0
    out = np.zeros((len(keys), dim), dtype=np.float32)
    i = 0
    for row, p in enumerate(per):
        if p:
            mean = vectors[i : i + len(p)].mean(axis=0)
            out[row] = mean / max(float(np.linalg.norm(mean)), 1e-12)
            i += len(p)
    return out
