"""What the kind classifier reads of a name, and the rules that decide without it.

- ``features``: the name's shape and character n-grams, and its corpus evidence (``evidence.Evidence``) as
  shares of its documents whose mentions carry each context cue: the words around it, the acronym's expansion
  and whether it is spelled like a name ("Direct Preference Optimization (DPO)") or a class ("large language
  models (LLMs)"), how many unrelated expansions it has, the introducing title's words, appositions, size
  suffixes, plural use; a frequent name's evidence once more under its own prefix.
- ``neighbour_features``: the kinds of the labeled names written next to it ("PPO, DPO and GRPO").
- ``rule_kind``: hand-written cues (the baseline): "X: a benchmark for ...", "X-7B", "X score", ...
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping

from radar.analysis.names.evidence import Evidence

# a name with at least this many documents is "frequent": its evidence also gets features of its own ("hi:")
FREQUENT = 30
# a context feature is kept when at least this share of the name's documents carry it (a frequent name has
# thousands of context words seen in 2 of its 5,000 papers: no signal, and most of the fit's time)
MIN_SHARE = 0.01
# the weight of the neighbour-kind features beside the evidence (shares in [0, 1] like the cue features)
NEIGHBOUR_WEIGHT = 3.0
# the context prefixes whose rare values still count (one paper's title or apposition says a lot)
_STRONG = ("sub:", "app:", "exp:", "explast:", "title_prefix", "intro", "sized", "variant")

# rule cues: words in the introducing title, the apposition, the acronym's expansion or right after the name
_CUES: dict[str, frozenset[str]] = {
    "benchmark": frozenset(
        [
            "benchmark",
            "benchmarks",
            "dataset",
            "datasets",
            "corpus",
            "corpora",
            "suite",
            "leaderboard",
            "testbed",
            "bench",
            "collection",
            "evaluating",
            "evaluation",
            "questions",
            "challenge",
            "arena",
            "database",
        ]
    ),
    "metric": frozenset(
        ["metric", "metrics", "score", "scores", "measure", "index", "rate", "coefficient", "error", "distance"]
    ),
    "org": frozenset(
        [
            "university",
            "institute",
            "laboratory",
            "lab",
            "inc",
            "company",
            "corporation",
            "conference",
            "association",
            "agency",
            "administration",
            "foundation",
            "organization",
        ]
    ),
    "hardware": frozenset(
        ["gpu", "gpus", "accelerator", "accelerators", "chip", "chips", "processor", "npu", "npus", "tpu", "device"]
    ),
    "system": frozenset(
        [
            "library",
            "toolkit",
            "engine",
            "platform",
            "system",
            "framework-based",
            "open-source",
            "serving",
            "runtime",
            "compiler",
            "agent",
            "simulator",
        ]
    ),
    "model": frozenset(["model", "models", "llm", "llms", "checkpoint", "checkpoints", "family", "vlm", "foundation"]),
}
_CUE_PREFIXES = ("sub:", "app:", "explast:", "R:")
# cues the classifier reads (not the rules), also from the word before the name: the head word of an acronym's
# expansion, an apposition, a subtitle or the words around it naming a technique ("Proximal Policy
# Optimization", "Monte Carlo Tree Search"), software ("implemented in X", "X kernels") or a broad class ("large
# language models", "reinforcement learning", "central processing unit")
_MORE_PREFIXES = ("sub:", "app:", "explast:", "R:", "L:")


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_MORE_CUES = {
    "method": _set(
        "optimization optimisation algorithm algorithms search sampling guidance technique decoding attention "
        "regularization distillation adaptation tuning fine-tuning loss objective estimation estimator test "
        "method prompting descent gradients propagation pruning quantization embedding boosting thoughts "
        "thought inference training policy allocation analysis"
    ),
    "tool": _set(
        "framework library toolkit engine kernels kernel implementation implementations package api implemented "
        "built written served deployed compiled runtime backend"
    ),
    "generic": _set(
        "learning processing intelligence language vision unit units networks data systems things reality "
        "vehicles vehicle devices"
    ),
}
# cues of how a name is used, as whole context features (the word before: "L:", after: "R:", an expansion's
# head: "explast:"): software one runs or writes code in ("implemented in X", "served with X", "X kernels", "X
# framework"), a device one runs on ("on X GPUs", "X processors", "X cores", "X ISA", "NVIDIA X") and a quantity
# one measures ("reduces X", "lower X", "X reduction", "X speedup", "time to first token (X)"). Each is read
# as its largest single share and as the sum of its shares (capped at 1): ``use=`` and ``uses=`` features.
_USE_CUES: dict[str, frozenset[str]] = {
    "software": frozenset(
        [f"L:{w}" for w in _set("implemented written built served deployed compiled integrated ported coded")]
        + [
            f"R:{w}"
            for w in _set(
                "framework frameworks library libraries engine engines kernels kernel backend backends runtime api "
                "apis package packages toolkit implementation implementations code programs programming graphs "
                "compiler ecosystem operators plugin server primitives codebase interface module"
            )
        ]
    ),
    "device": frozenset(
        [f"L:{w}" for w in _set("nvidia amd intel qualcomm apple arm")]
        + [
            f"R:{w}"
            for w in _set(
                "gpus gpu processors processor cores core cpus cpu chips chip architecture architectures isa soc "
                "socs boards board devices device microcontrollers microcontroller hardware accelerators accelerator "
                "nodes servers clusters instances cortex"
            )
        ]
    ),
    "measure": frozenset(
        [
            f"L:{w}"
            for w in _set(
                "reduces reduce reducing reduced lower lowers lowering minimize minimizes minimizing improves improve "
                "improving higher average mean"
            )
        ]
        + [
            f"R:{w}"
            for w in _set(
                "reduction reductions improvement improvements speedup speedups slo slos values value gains gain "
                "drop degradation increase decrease scores"
            )
        ]
        + [f"explast:{w}" for w in _set("time latency rate ratio score error throughput distance accuracy index")]
    ),
}
# the class a list names before it: "inference engines such as X", "benchmarks like X", "methods including X"
# (the two words before the name, stop words left out: ``L2:engines such``)
_LIST_HEADS = {
    "software": "engines frameworks libraries toolkits systems tools platforms compilers runtimes packages",
    "device": "gpus accelerators processors chips devices hardware cpus architectures",
    "measure": "metrics measures scores",
    "algorithm": "methods algorithms approaches techniques objectives losses optimizers",
    "checkpoint": "models llms vlms checkpoints",
    "dataset": "benchmarks datasets suites corpora",
}
for _kind, _heads in _LIST_HEADS.items():
    _USE_CUES[_kind] = _USE_CUES.get(_kind, frozenset()) | frozenset(
        f"L2:{head} {joint}" for head in _heads.split() for joint in ("such", "like", "including")
    )
_USE_INDEX: dict[str, tuple[str, ...]] = {}
for _kind, _cue in _USE_CUES.items():
    for _feat in _cue:
        _USE_INDEX[_feat] = (*_USE_INDEX.get(_feat, ()), _kind)
# the lab-area share features (what ``evaluate.Variant(areas=False)`` leaves out)
AREA_FEATURES = ("area=",)
# the weights of the use-cue and area features beside the other shares (a larger weight is a weaker
# regularisation of the few labeled systems, devices and metrics that carry them)
USE_WEIGHT = 1.0
AREA_WEIGHT = 3.0
# the use cues' features (what ``evaluate.Variant(uses=False)`` leaves out)
USE_FEATURES = ("use=", "uses=")
# the features of the expansions and the cues above (what ``evaluate.Variant(expansions=False)`` leaves out)
EXPANSION_FEATURES = (
    "expanded",
    "exp_cap",
    "exp_lower",
    "exp_top",
    "exp_heads",
    "plural_share",
    "cue=method",
    "cue=tool",
    "cue=generic",
    "ctx=expanded",
    "ctx=exp_cap",
)
_HYPHEN_LOWER = re.compile(r"-[a-z]+$")
_TITLE_WORDS = re.compile(r"^[A-Z][a-z]+(?:-[A-Z][a-z]+)+$")


def shape(name: str) -> str:
    """The name's letter classes, runs collapsed: GRPO -> X, DeepSeek-R1 -> XxXx-Xd, Qwen2.5 -> Xxd.d."""
    out: list[str] = []
    for c in name:
        cls = "X" if c.isupper() else "x" if c.islower() else "d" if c.isdigit() else c
        if not out or out[-1] != cls:
            out.append(cls)
    return "".join(out)


def name_features(name: str) -> dict[str, float]:
    feats: dict[str, float] = {"shape=" + shape(name): 1.0}
    parts = name.split("-")
    feats["n_parts=" + str(min(len(parts), 3))] = 1.0
    if _HYPHEN_LOWER.search(name):
        feats["last_part_lower"] = 1.0
        feats["last_part=" + parts[-1]] = 1.0
    if _TITLE_WORDS.match(name):
        feats["title_words"] = 1.0
    if name.isupper():
        feats["all_caps"] = 1.0
    if any(c.isdigit() for c in name):
        feats["digit"] = 1.0
    if len(name) >= 3 and name.endswith("s") and (name[-2].isupper() or name[-2].isdigit()):
        feats["plural"] = 1.0
    feats["len=" + str(min(len(name), 8))] = 1.0
    low = f"<{name.lower()}>"
    for n in (3, 4):
        for i in range(len(low) - n + 1):
            feats["cg=" + low[i : i + n]] = 0.5
    return feats


# the prepositions that end a hyphenated expansion's head: "time-to-first-token" is a time, "mixture-of-experts" a
# mixture
_HEAD_LINKS = _set("of to for per in on over with from by at via")


def expansion_head(word: str) -> str:
    """The head noun of an acronym's expansion written as one hyphenated word: the part before its first
    preposition ("time-to-first-token" -> time, "mixture-of-experts" -> mixture), else its last part
    ("register-transfer-level" -> level); a plain word is its own head."""
    parts = [p for p in word.split("-") if p]
    if len(parts) < 2:
        return word
    for i in range(1, len(parts)):
        if parts[i] in _HEAD_LINKS:
            return parts[i - 1]
    return parts[-1]


def with_heads(feats: Mapping[str, int], n: int) -> Mapping[str, int]:
    """The context features with each hyphenated expansion's head counted as an expansion head word too
    ("explast:time-to-first-token" also as "explast:time"; documents capped at ``n``), so that the cue words of
    the heads (a "time", a "rate", an "optimization") read the hyphenated spellings."""
    extra: Counter[str] = Counter()
    for feat, c in feats.items():
        if feat.startswith("explast:") and "-" in feat:
            head = expansion_head(feat[8:])
            if head != feat[8:]:
                extra["explast:" + head] += c
    if not extra:
        return feats
    out = Counter(feats)
    for feat, c in extra.items():
        out[feat] = min(out[feat] + c, n)
    return out


def evidence_features(ev: Evidence | None, *, heads: bool = False) -> dict[str, float]:
    """The evidence as features; ``heads``: hyphenated expansions also count under their head word
    (``with_heads``: a lever measured and left off, docs/names.md)."""
    if ev is None:
        return {"no_evidence": 1.0}
    n = max(ev.n_docs, 1)
    context = with_heads(ev.features, n) if heads else ev.features
    feats: dict[str, float] = {
        "log_docs": math.log1p(n) / 5,
        "intro_share": math.sqrt(len(ev.claim_docs) / n),
        "compared_share": math.sqrt(len(ev.compared_docs) / n),
        "n_spellings": min(len(ev.spellings), 4) / 4,
    }
    for feat, c in context.items():
        if (c >= 2 or feat.startswith(_STRONG)) and c >= MIN_SHARE * n:
            feats["ctx=" + feat] = math.sqrt(c / n)
    for feat in ev.intro_features:
        if feat.startswith(_STRONG) or feat.startswith("R:"):
            feats["intro=" + feat] = 1.0
    shares = cue_shares(ev, context)
    for kind, share in shares.items():
        feats["cue=" + kind] = math.sqrt(share)
    for kind in _CUES:
        feats["intro_cue=" + kind] = float(any(f.split(":", 1)[-1] in _CUES[kind] for f in ev.intro_features))
    expanded = ev.features.get("expanded", 0)
    feats["expanded"] = math.sqrt(expanded / n)
    if expanded:
        feats["exp_cap"] = ev.features.get("exp_cap", 0) / expanded
        feats["exp_lower"] = 1 - feats["exp_cap"]
    head_docs = [c for f, c in ev.features.items() if f.startswith("explast:")]
    if head_docs:  # one expansion (DPO) or an acronym that several unrelated things share (CAT, EMA, ACC)
        feats["exp_top"] = max(head_docs) / sum(head_docs)
        feats["exp_heads"] = min(sum(c >= max(2, 0.05 * sum(head_docs)) for c in head_docs), 6) / 6
    top: Counter[str] = Counter()
    total_use: Counter[str] = Counter()
    for feat, c in context.items():
        for kind in _USE_INDEX.get(feat, ()):
            top[kind] = max(top[kind], c)
            total_use[kind] += c
    for kind, c in top.items():
        feats["use=" + kind] = USE_WEIGHT * math.sqrt(c / n)
        feats["uses=" + kind] = USE_WEIGHT * math.sqrt(min(total_use[kind] / n, 1.0))
    for area, c in ev.area_docs.items():
        feats["area=" + area] = AREA_WEIGHT * c / n
    total = sum(ev.spellings.values())
    plural = sum(c for s, c in ev.spellings.items() if len(s) > 2 and s.endswith("s") and not s[-2].islower())
    feats["plural_share"] = plural / max(total, 1)
    feats["rule=" + rule_kind(ev.name, ev, shares)] = 1.0
    return feats


def features(name: str, ev: Evidence | None, *, heads: bool = False, frequent: int = FREQUENT) -> dict[str, float]:
    """The name's shape and its evidence; for a frequent name (``FREQUENT`` documents or more) the evidence
    features once more under "hi:", so that the model weighs evidence differently where there is a lot of it
    (feature augmentation: 94 PPO-like papers say more than a rare acronym's 3). ``frequent``: the documents
    from which a name counts as frequent here (a lever measured and left off: ``evaluate.Variant.frequent_from``)."""
    feats = {**name_features(ev.name if ev is not None else name), **evidence_features(ev, heads=heads)}
    if ev is not None and ev.n_docs >= frequent:
        feats.update({"hi:" + k: v for k, v in list(feats.items()) if not k.startswith("cg=")})
        feats["hi"] = 1.0
    return feats


def neighbours(ev: Evidence, lookup: Mapping[str, str]) -> Counter[str]:
    """The names written right before or after this one (lists: "PPO, DPO and GRPO"; "XGBoost, LightGBM"):
    group key -> documents, read from the words around its mentions (``L:``, ``L1:``, ``R:`` features)."""
    out: Counter[str] = Counter()
    for feat, c in ev.features.items():
        if feat.startswith(("L:", "R:", "L1:")):
            # the words are lower case already: their spelling key is the word without hyphens
            group = lookup.get(feat.split(":", 1)[1].strip(",.;()").replace("-", ""))
            if group is not None and group != ev.key:
                out[group] += c
    return out


def neighbour_features(ev: Evidence | None, near: Counter[str], lexicon: Mapping[str, str]) -> dict[str, float]:
    """The kinds of the labeled names among ``near`` (``neighbours``), as shares of this name's documents."""
    if ev is None:
        return {}
    per_kind: Counter[str] = Counter()
    for group, c in near.items():
        kind = lexicon.get(group)
        if kind is not None:
            per_kind[kind] += c
    n = max(ev.n_docs, 1)
    return {"near=" + kind: NEIGHBOUR_WEIGHT * math.sqrt(min(c / n, 1.0)) for kind, c in per_kind.items()}


def _cue_index() -> dict[str, tuple[str, ...]]:
    index: dict[str, list[str]] = {}
    for cues, prefixes in ((_CUES, _CUE_PREFIXES), (_MORE_CUES, _MORE_PREFIXES)):
        for kind, words in cues.items():
            for prefix in prefixes:
                for w in words:
                    index.setdefault(prefix + w, []).append(kind)
    return {f: tuple(kinds) for f, kinds in index.items()}


_CUE_INDEX = _cue_index()  # context feature ("explast:benchmark") -> the cue kinds it counts for


def cue_shares(ev: Evidence, context: Mapping[str, int] | None = None) -> dict[str, float]:
    """Per cue kind, the largest share of the name's documents carrying one of its cue words (one pass over
    the name's features, or over ``context``: ``with_heads`` of them)."""
    best = dict.fromkeys((*_CUES, *_MORE_CUES), 0)
    for feat, c in (ev.features if context is None else context).items():
        for kind in _CUE_INDEX.get(feat, ()):
            if c > best[kind]:
                best[kind] = c
    n = max(ev.n_docs, 1)
    return {kind: c / n for kind, c in best.items()}


# accelerator product names (A100, H100, H20, L40S, MI300X, GB200, RTX3090, Ascend910B, Gaudi2): ``hardware``
# whatever the classifier says (it has one hardware label to learn from). P-numbers are left out: P90/P99
# are percentiles, P300 an ERP component; so is a bare L4: in the bundled snapshot 1 of its 5 papers means the
# GPU, 2 introduce systems named L4, the others are levels (L4 driving autonomy, reasoning level L4).
HARDWARE = re.compile(
    r"^(?:[AHVB]\d{2,3}|L40S?|MI\d{3}[AX]?|G[BH]\d{3}|[RG]TX-?\d{3,4}(?:Ti)?|Ascend-?\d{3}[A-Z]?|Gaudi-?\d)$"
)


def rule_kind(name: str, ev: Evidence | None, shares: Mapping[str, float] | None = None) -> str:
    """The baseline: shape rules, then the strongest cue in the evidence, then 'introduced' means method.
    ``shares``: ``cue_shares(ev)`` when the caller has them."""
    shown = ev.name if ev is not None else name
    if HARDWARE.match(shown):
        return "hardware"
    if _HYPHEN_LOWER.search(shown) or _TITLE_WORDS.match(shown):
        return "generic"
    low = shown.lower()
    if low.endswith(("bench", "qa", "eval")) or "bench-" in low:
        return "benchmark"
    if ev is None:
        return "generic"
    n = max(ev.n_docs, 1)
    if (ev.features.get("sized", 0) + ev.features.get("variant", 0)) / n >= 0.2:
        return "model"
    shares = cue_shares(ev) if shares is None else shares
    kind, share = max(((k, shares[k]) for k in _CUES), key=lambda kv: kv[1])
    if share >= 0.2:
        return kind
    if len(ev.claim_docs) / n >= 0.1 or ev.features.get("title_prefix", 0):
        return "method"
    return "generic"
