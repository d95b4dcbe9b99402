"""Which spellings are one name: case and hyphens (Qwen-3.5 = Qwen3.5), plurals (LoRAs = LoRA), variants
(Qwen2.5-7B-Instruct = Qwen2.5) and a short name used for a longer one (R1 = DeepSeek-R1).

Pure functions over spelling and document sets; ``extract.family_of`` strips the variant suffixes first.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

from radar.analysis.names.extract import family_of
from radar.store.text import fold_lookalikes

_FOLD = re.compile(r"[-\s_]+")
# a short name is merged into the longer one that ends with it when at least this share of its documents
# also mention the longer one
SHORT_NAME_SHARE = 0.5
# two case forms of a key (vLLM, VLLM) stay apart when the cosine of their context profiles is below this, the
# smaller form has at least ``CASE_MIN_DOCS`` documents and ``CASE_MIN_SHARE`` of the pair's, and it is not
# mostly a title's capitalisation (AI-Driven in titles, AI-driven in abstracts: one name)
CASE_SIMILARITY = 0.2
CASE_MIN_DOCS = 10
CASE_MIN_SHARE = 0.15
CASE_MAX_TITLE_SHARE = 0.5
# the context features a profile reads: the words right before and after the mentions
_PROFILE = ("L:", "R:")


def key_of(family: str) -> str:
    """The spelling key of a family: lower case, no hyphens (Qwen-3.5, Qwen3.5 and QWEN3.5 -> qwen3.5), Cyrillic
    and Greek lookalikes in a name that mixes them with Latin made Latin (DАPO with a Cyrillic А -> dapo)."""
    return _FOLD.sub("", fold_lookalikes(family)).lower()


def surface_key(surface: str) -> str:
    """The spelling key of any surface form, variant suffixes dropped (Qwen2.5-7B-Instruct -> qwen2.5)."""
    return key_of(family_of(surface))


def case_form(family: str, *, plural: bool) -> str:
    """A family's spelling with its case kept, hyphens and (``plural``) a final plural "s" dropped: the unit
    whose contexts ``distinct_contexts`` compares (vLLM -> vLLM; VLLMs -> VLLM; Qwen-3.5 -> Qwen3.5)."""
    form = _FOLD.sub("", family)
    return form[:-1] if plural and form.endswith(("s", "S")) else form


def distinct_contexts(a: Mapping[str, int], n_a: int, b: Mapping[str, int], n_b: int) -> bool:
    """Whether two case forms of one key (``a``: the main one; features -> documents) read as different
    things: the smaller has enough documents, is not mostly written in titles, and the cosine of their
    context profiles (share of documents per word around the mention, ``_PROFILE``) is below
    ``CASE_SIMILARITY`` ("served with vLLM" vs "vision large language models (VLLMs)")."""
    small, n_small = (a, n_a) if n_a < n_b else (b, n_b)
    if n_small < CASE_MIN_DOCS or n_small < CASE_MIN_SHARE * (n_a + n_b):
        return False
    if small.get("in_title", 0) + small.get("title_prefix", 0) >= CASE_MAX_TITLE_SHARE * n_small:
        return False

    def profile(feats: Mapping[str, int], n: int) -> dict[str, float]:
        return {f: c / n for f, c in feats.items() if f.startswith(_PROFILE)}

    pa, pb = profile(a, n_a), profile(b, n_b)
    dot = sum(v * pb.get(f, 0.0) for f, v in pa.items())
    norm = math.sqrt(sum(v * v for v in pa.values()) * sum(v * v for v in pb.values()))
    return norm > 0 and dot / norm < CASE_SIMILARITY


def merge_keys(
    docs: Mapping[str, Sequence[int]],
    families: Mapping[str, str],
    features: Mapping[str, Mapping[str, int]] | None = None,
) -> dict[str, str]:
    """Map every key to the key of its group.

    ``docs``: documents (sorted indices) of each key; ``families``: the most frequent spelling of each key;
    ``features``: documents per context feature of each key (``L:deepseek``: the word before it).
    Plurals go to their singular when it is a key (LLMs -> LLM); a short key goes to the most frequent
    longer key ending in "-" + it when at least ``SHORT_NAME_SHARE`` of its documents mention that one too
    or write the longer one's head before it ("DeepSeek R1").
    """
    parent = {k: k for k in docs}
    for k in docs:
        if len(k) >= 3 and k.endswith("s") and k[:-1] in docs and not k.endswith("ss"):
            parent[k] = k[:-1]
    by_tail: dict[str, list[str]] = {}
    for k, fam in families.items():
        if "-" in fam:
            tail = key_of(fam.rsplit("-", 1)[1])
            if tail in docs and tail != k:
                by_tail.setdefault(tail, []).append(k)
    for tail, longer in by_tail.items():
        if parent[tail] != tail:
            continue
        best = max(longer, key=lambda k: (len(docs[k]), k))
        short_docs = docs[tail]
        if len(docs[best]) < 2 or not short_docs:
            continue
        both = len(set(short_docs).intersection(docs[best]))
        head = families[best].rsplit("-", 1)[0].lower()
        spaced = features.get(tail, {}).get("L:" + head, 0) if features is not None else 0
        if max(both, spaced) >= SHORT_NAME_SHARE * len(short_docs):
            parent[tail] = best

    def root(k: str) -> str:
        seen = set()
        while parent[k] != k and k not in seen:
            seen.add(k)
            k = parent[k]
        return k

    return {k: root(k) for k in docs}
