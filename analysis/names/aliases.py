"""Which spellings are one name: case and hyphens (Qwen-3.5 = Qwen3.5), plurals (LoRAs = LoRA), variants
(Qwen2.5-7B-Instruct = Qwen2.5) and a short name used for a longer one (R1 = DeepSeek-R1).

Pure functions over spelling and document sets; ``extract.family_of`` strips the variant suffixes first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from radar.analysis.names.extract import family_of

_FOLD = re.compile(r"[-\s_]+")
# a short name is merged into the longer one that ends with it when at least this share of its documents
# also mention the longer one
SHORT_NAME_SHARE = 0.5


def key_of(family: str) -> str:
    """The spelling key of a family: lower case, no hyphens (Qwen-3.5, Qwen3.5 and QWEN3.5 -> qwen3.5)."""
    return _FOLD.sub("", family).lower()


def surface_key(surface: str) -> str:
    """The spelling key of any surface form, variant suffixes dropped (Qwen2.5-7B-Instruct -> qwen2.5)."""
    return key_of(family_of(surface))


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
