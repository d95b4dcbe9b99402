"""The string features each learned part reads, from one paper's ``Extracted`` candidates.

- ``name_features``: one candidate (is it the paper's name?): its own evidence and the paper's cues;
- ``intro_features``: the paper (does it introduce something?): its cues and its best candidate's evidence;
- ``kind_features``: the introduced name's kind: the title's words, the words right after the name
  ("X, a benchmark for ...") and after "we propose", the name's shape;
- ``area_features``: the paper's area: title and abstract words and its arXiv categories;
- ``builds_features``: another candidate (does the paper build on or compare against it?).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from radar.analysis.contributions.extract import Candidate, Extracted


def _split(text: str) -> list[str]:
    return text.split()


_WORD = re.compile(r"[a-z][a-z0-9\-]+")
_STOP = frozenset(
    _split(
        "a an the of for and to in on with as from by is are was be we our this that these its it via at or than "
        "which using based into can their such both also while when where how what not more most has have new "
        "novel paper work propose proposed present introduce approach"
    )
)
_KIND_WORDS = 8  # words read after the name and after the introducing verb
# words (and word pairs) that say what kind of thing a name is, grouped so that a few labeled papers per kind
# suffice; a size token ("7b", "1.5b") counts for model
KIND_CUES: dict[str, frozenset[str]] = {
    "benchmark": frozenset(
        _split(
            "benchmark benchmarks dataset datasets corpus corpora suite leaderboard testbed environment "
            "environments gym arena questions annotated measuring evaluating calibrating"
        )
        + ["tasks set", "evaluation framework"]
    ),
    "model": frozenset(
        _split(
            "checkpoint checkpoints open-weight open-weights release released releases pre-trained pretrained "
            "llm llms lvlm lvlms mllm mllms vlm vlms parameters instruct distill distilled distillation"
        )
        + ["technical report", "model family", "models family", "family of", "foundation model", "foundation models"]
        + ["reward model", "reward models", "reasoning model", "reasoning models", "open-source model"]
        + ["open-source models", "trained with", "trained via", "trained using", "trained on"]
    ),
    "system": frozenset(
        _split(
            "system systems serving engine engines library libraries platform platforms toolkit toolkits "
            "framework runtime infrastructure scheduler compiler agent agents assistant tool pipeline service "
            "deployment open-source pytorch implementation"
        )
    ),
    "hardware": frozenset(
        _split(
            "accelerator accelerators chip chips hardware asic asics fpga fpgas tops/w tflops/w mm2 nm silicon "
            "neuromorphic systolic in-memory processor processors co-design rasterizer rasterizers circuit "
            "circuits energy-efficient tape-out tapeout soc"
        )
    ),
    "method": frozenset(
        _split(
            "method algorithm approach technique loss objective strategy mechanism training optimization "
            "optimisation policy learning regularization regularisation sampling decoding attention pruning "
            "quantization paradigm scheme"
        )
    ),
}
_CUE_TOKEN = re.compile(r"[a-z0-9][a-z0-9\-/.]*[a-z0-9]|[a-z0-9]")
_SIZE_TOKEN = re.compile(r"\d+(?:\.\d+)?[bm]")
_CUE_KINDS: dict[str, str] = {}
for _kind, _cues in KIND_CUES.items():
    for _cue in _cues:
        _CUE_KINDS.setdefault(_cue, _kind)
_PAIR_FIRST = frozenset(cue.split()[0] for cue in _CUE_KINDS if " " in cue)  # first words of the word-pair cues


_NP_END = re.compile(
    r"\s(?:for|to|via|with|that|which|who|of|on|in|at|by|from|using|through|towards?|under|across|where|leveraging|"
    r"into|over|beyond|against|without|within|as|"
    r"enabling|based|designed|tailored|built|capable|trained|achieving|able|is|are|can|allows?|enables?|"
    r"integrat\w+|combin\w+|consist\w*|compris\w+)(?![\w-])|[;:]|\.(?!\d)|,\s*(?:which|that|where|and\s+(?:we|it|show\w*))\b|"
    r"\s\w+ed\s+(?:from|by|with|for|on|to|in|via|using|as)(?![\w-])",
    re.I,
)
_PARENS = re.compile(r"\s*\([^()]{0,80}\)")
_NP_WORD = re.compile(r"[A-Za-z][\w\-]*")
_NP_SKIP = frozenset(_split("a an the and or novel new first our simple efficient effective general unified"))
_APPOSITIVE = re.compile(r"\s*(?:\([^)]{0,80}\)\s*)?(?:,|:|\s[-–—]{1,2}|\s+is|\s+as)\s*(?:a|an|the)\s+(.{0,160})", re.I)
_NAME_NOUN = re.compile(r"\)?\s+([a-z]+)\b")
NP_WORDS = 6  # words of a noun phrase read, ending at its head


def np_words(phrase: str) -> list[str]:
    """The lower-cased words of a phrase's first noun phrase, parentheses left out ("A Unified Document Layout
    Detection Model to ..." -> unified, document, layout, detection, model; "a hierarchical, modular, and robust
    framework that ..." -> hierarchical, modular, robust, framework)."""
    head = _NP_END.split(" " + _PARENS.sub("", phrase), maxsplit=1)[0]
    found = [w.lower() for w in _NP_WORD.findall(head)[:16]]
    return [w for w in found if w not in _NP_SKIP][-NP_WORDS:]


def np_head(phrase: str) -> str:
    """The noun phrase's head: its last word ("A Unified Document Layout Detection Model to ..." -> model)."""
    found = np_words(phrase)
    return found[-1] if found else ""


# head nouns that name a kind ("X: A ... Model for ...", "X, a serving system"); anything else: no cue
HEAD_KINDS: dict[str, str] = {
    **dict.fromkeys(_split("model llm lvlm mllm vlm lm slm checkpoint checkpoints family encoder"), "model"),
    **dict.fromkeys(
        _split(
            "system systems engine library libraries platform toolkit toolbox runtime serving service assistant "
            "agent agents simulator compiler infrastructure tool software"
        ),
        "system",
    ),
    **dict.fromkeys(
        _split(
            "benchmark benchmarks dataset datasets corpus suite leaderboard testbed environment gym arena collection"
        ),
        "benchmark",
    ),
    **dict.fromkeys(
        _split(
            "accelerator accelerators chip chips processor co-design hardware rasterizer rasterizers asic fpga "
            "soc macro"
        ),
        "hardware",
    ),
    **dict.fromkeys(
        _split(
            "method methods algorithm approach technique framework strategy loss objective mechanism paradigm "
            "scheme recipe optimization learning training pruning quantization decoding architecture module "
            "attention policy"
        ),
        "method",
    ),
}


_HARDWARE_WORDS = frozenset(_split("hardware hardware-software software-hardware chip accelerator circuit asic fpga"))


def head_features(ex: Extracted, c: Candidate) -> set[str]:
    """What the paper calls its contribution: the head noun of the title's rest ("X: A ... Model for ...") and
    of the apposition ("X, a serving system that ..."), and the words of those noun phrases."""
    out: set[str] = set()
    phrases: list[tuple[str, str]] = []
    title = ex.text[: ex.title_len]
    if "src:prefix" in c.features:
        phrases.append(("T", title[len(c.surface) :].lstrip(" :-–—")))
    at = ex.text.find(c.surface, ex.title_len + 1)
    if at >= 0:
        m = _APPOSITIVE.match(ex.text, at + len(c.surface))
        if m:
            phrases.append(("A", m.group(1)))
    at = ex.text.find(c.surface, ex.title_len + 1)
    while at >= 0:  # the noun right after the name: "the ... (DAPO) algorithm", "the X engine"
        m = _NAME_NOUN.match(ex.text, at + len(c.surface))
        if m and m.group(1) in HEAD_KINDS:
            phrases.append(("N", m.group(1)))
            break
        at = ex.text.find(c.surface, at + len(c.surface))
    if c.expansion:  # the long form's own head: "Dose Optimization Language Agent (DOLA)" -> agent
        phrases.append(("L", c.expansion))
    for where, phrase in phrases:
        head = np_head(phrase) if where != "N" else phrase.lower()
        if not head:
            continue
        out.update("np:" + w for w in np_words(phrase) if w != head)
        out.add(f"head:{where}:{head}")
        out.add(f"head:{head}")
        kind = HEAD_KINDS.get(head)
        if kind == "hardware" and head == "co-design" and not _HARDWARE_WORDS & set(np_words(phrase)):
            kind = "method"  # "Algorithm and Kernel Pipelining Co-Design" (FlashAttention-4) is no chip
        if kind:
            out.add(f"headkind:{kind}")
            out.add(f"headkind:{kind}@{where}")
    return out


SURVEY_HEADS = frozenset(_split("survey surveys review overview tutorial primer"))


def survey_title(ex: Extracted) -> bool:
    """Whether the title calls the paper a survey ("X: A Survey on ...", "A Review of ..."): it introduces
    nothing (the labels' rule for surveys and reviews)."""
    title = ex.text[: ex.title_len]
    parts = re.split(r":\s|\s[-–—]{1,2}\s", title, maxsplit=1)
    return any(np_head(p) in SURVEY_HEADS for p in parts)


def head_kinds(ex: Extracted, c: Candidate) -> set[str]:
    """The kinds the head nouns name (``HEAD_KINDS``). A spelled-out long form names a kind only when it is not
    ``model``: "Dose Optimization Language Agent (DOLA)" is a system, but "Core-Periphery State Space Model
    (CP-SSM)" names an architecture as often as a checkpoint."""
    return {
        f[len("headkind:") : -2]
        for f in head_features(ex, c)
        if f.startswith("headkind:") and (f[-2:] in ("@T", "@A", "@N") or (f[-2:] == "@L" and f != "headkind:model@L"))
    }


def cue_features(text: str, where: str) -> set[str]:
    """``cue:KIND@where`` for each kind whose cue words the text holds (``:3+`` for three or more)."""
    counts: dict[str, int] = {}
    tokens = _CUE_TOKEN.findall(text.lower())
    for i, tok in enumerate(tokens):
        kind = _CUE_KINDS.get(tok)
        if kind is None and tok in _PAIR_FIRST and i + 1 < len(tokens):
            kind = _CUE_KINDS.get(tok + " " + tokens[i + 1])
        if kind is None and tok[0].isdigit() and _SIZE_TOKEN.fullmatch(tok):
            kind = "model"
        if kind is not None:
            counts[kind] = counts.get(kind, 0) + 1
    out = set()
    for kind, n in counts.items():
        out.add(f"cue:{kind}@{where}")
        if n >= 3:
            out.add(f"cue:{kind}@{where}:3+")
    return out


def words(text: str, limit: int = 10_000) -> list[str]:
    """The first ``limit`` words of ``text``, lower-cased, stop words left out."""
    found = [w for w in _WORD.findall(text.lower()) if w not in _STOP]
    return found if len(found) <= limit else found[:limit]


def lexicon_kind(surface: str, lexicon: Mapping[str, str]) -> str:
    """The labeled kind of a known name ('' when unknown): GRPO method, LLMs generic, GPT-4 model."""
    key = surface.lower()
    return lexicon.get(key) or (lexicon.get(key[:-1], "") if key.endswith("s") else "")


_BUILDS_ONLY = ("cmp:", "lin:", "prev:")  # the finer comparison and lineage evidence: builds_on reads it


def name_features(c: Candidate, paper: frozenset[str], lexicon: Mapping[str, str]) -> set[str]:
    feats = {f for f in c.features if not f.startswith(_BUILDS_ONLY)} | paper
    known = lexicon_kind(c.surface, lexicon)
    feats.add("lex:" + (known or "none"))
    srcs = sorted(f for f in c.features if f.startswith("src:"))
    if srcs:
        feats.add("srcs:" + "+".join(srcs))
    if "src:prefix" in c.features:
        feats.update("prefix&" + f for f in c.features if f.startswith(("intro:", "shape:", "abs_count:")))
    if "src:defined" in c.features:
        feats.update("defined&" + f for f in c.features if f.startswith(("intro:", "compared", "lineage")))
    return feats


def also_features(c: Candidate, lexicon: Mapping[str, str]) -> set[str]:
    """Another candidate of a paper that introduces something: is it introduced too (CISPO beside MiniMax-M1)?
    Its own evidence only: the paper's cues say nothing about which of its names is a second one."""
    return {f for f in name_features(c, frozenset(), lexicon) if not f.startswith("p:")}


def intro_features(ex: Extracted, best: Candidate | None, best_score: float, runner_up: float = 0.0) -> set[str]:
    feats = set(ex.paper)
    if best is None:
        feats.add("no_candidate")
        return feats
    feats.update("top:" + f for f in best.features)
    bucket = min(int(best_score * 10), 9)
    feats.add(f"top_score:{bucket}")
    feats.update(f"top_score>={b}" for b in range(1, bucket + 1))
    margin = best_score - runner_up
    feats.update(f"margin>={m}" for m in (0.1, 0.3, 0.5) if margin >= m)
    return feats


def kind_features(ex: Extracted, c: Candidate, categories: Iterable[str] = ()) -> set[str]:
    feats = {"bias"} | {"c:" + f for f in c.features if f.startswith(("shape:", "src:", "apposition", "is_a"))}
    feats.update("cat:" + cat for cat in categories)  # cs.AR (hardware), cs.DC, cs.SE (systems), ...
    title = ex.text[: ex.title_len]
    feats.update("t:" + w for w in words(title))
    feats |= cue_features(title, "title")
    feats |= head_features(ex, c)
    text = ex.text
    feats |= cue_features(text[ex.title_len + 1 :], "abs")
    at = text.find(c.surface)
    while at >= 0:
        end = at + len(c.surface)
        after = text[end : end + 200]
        feats.update("r:" + w for w in words(after, _KIND_WORDS // 2))
        feats |= cue_features(" ".join(words(after, _KIND_WORDS)), "after")
        if at > ex.title_len:
            break
        at = text.find(c.surface, end)
    intro_start = text.find(c.surface, ex.title_len + 1)
    if intro_start >= 0:
        left = text[max(ex.title_len + 1, intro_start - 80) : intro_start]
        feats.update("l:" + w for w in words(left)[-4:])
        feats |= cue_features(left, "before")
    return feats


def area_features(ex: Extracted, categories: Iterable[str]) -> set[str]:
    title = ex.text[: ex.title_len]
    feats = {"bias"}
    feats.update("t:" + w for w in words(title))
    abstract = words(ex.text[ex.title_len + 1 :])
    feats.update("w:" + w for w in abstract)
    cats = list(categories)
    feats.update("cat:" + c for c in cats)
    if cats:
        feats.add("cat0:" + cats[0])
    return feats


def builds_features(c: Candidate, lexicon: Mapping[str, str], name: str = "") -> set[str]:
    """Another candidate: does the paper build on it or compare against it? Its evidence ("outperforms X",
    "based on X", "on X" for a data set), its labeled kind, and whether it is part of the paper's own name
    (GRPO of Tree-GRPO, DDPG of PH-DDPG: the method it extends)."""
    feats = {"bias"} | {f for f in c.features if not f.startswith(("verb:", "p:"))}
    feats.add("lex:" + (lexicon_kind(c.surface, lexicon) or "none"))
    if name and c.surface != name and len(c.surface) >= 2 and _part_of(c.surface, name):
        feats.add("part_of_name")
    return feats


def _part_of(part: str, name: str) -> bool:
    """Whether ``part`` is a hyphen/space-separated piece of ``name``, or its end ("GRPO" of "NGRPO")."""
    pieces = re.split(r"[\s\-]+", name)
    return part in pieces or (name.endswith(part) and len(name) - len(part) <= 3)
