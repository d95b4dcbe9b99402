"""``find_names``: the named things of a corpus with their kind, introducing paper, code and adoption.

Flow: evidence.collect (mentions -> aliases -> evidence per name) -> kinds (classifier fitted on the shipped
labels found in the corpus, else rules) -> ``Name`` values.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import date, timedelta
from importlib import resources

import numpy as np
import orjson

from radar.analysis.label_lines import json_lines
from radar.analysis.names.aliases import surface_key
from radar.analysis.names.context import Embed, context_vectors
from radar.analysis.names.errors import NamesError
from radar.analysis.names.evidence import Corpus, Evidence, TextDocument, collect
from radar.analysis.names.features import HARDWARE, features, neighbour_features, neighbours, rule_kind
from radar.analysis.names.kinds import KINDS, Decider
from radar.analysis.names.table import NameRow

# the classifier is fitted when the corpus holds at least this many labeled names of at least 3 kinds
MIN_LABELED = 40
MAX_ALIASES = 20
# the shipped labels (labels/SOURCES.md): random names, frequent names, names the trend detector listed as new (the
# project's shared labels, which the benchmark evaluates on), and the extra training names (fewer than 30 papers,
# none of the shared ones: training and lexicon only, never evaluated)
SHARED_LABEL_FILES = ("names_dev.jsonl", "names_dev2.jsonl", "names_dev3.jsonl")
EXTRA_LABEL_FILES = ("names_extra.jsonl",)
LABEL_FILES = SHARED_LABEL_FILES + EXTRA_LABEL_FILES
# a paper introduces a name only when at most this many earlier documents mention it (else the name was in
# use before: "we propose PPO" in 2025 does not introduce PPO)
PRIOR_MENTIONS = 2


# the names stage's record: what ``find_names`` decides is the row the names table stores (table.py)
Name = NameRow


def load_labels(text: str | None = None, files: Sequence[str] = LABEL_FILES) -> list[tuple[str, str]]:
    """(name, kind) pairs of a label file's text (``{"name", "kind"}`` lines); by default the shipped ``files``
    (all of them: the shared labels, then the extra training names). Kinds outside ``KINDS`` (``unknown``) are
    left out."""
    if text is None:
        folder = resources.files("radar.analysis.names").joinpath("labels")
        text = "\n".join(folder.joinpath(f).read_text("utf-8") for f in files)
    pairs = json_lines(
        text,
        _name_label,
        lambda n: NamesError(f"name labels line {n} is not a JSON object with name and kind; fix that line"),
    )
    return [(name, kind) for name, kind in pairs if kind in KINDS]


def _name_label(line: str) -> tuple[str, str]:
    row = orjson.loads(line)
    return str(row["name"]), str(row["kind"])


def training_set(corpus: Corpus, labels: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Group key -> kind for the labeled names found in the corpus (the majority label of a group)."""
    votes: dict[str, Counter[str]] = {}
    for name, kind in labels:
        ev = corpus.find(name)
        if ev is not None:
            votes.setdefault(ev.key, Counter())[kind] += 1
    return {k: c.most_common(1)[0][0] for k, c in votes.items()}


def classify(
    corpus: Corpus, labels: Sequence[tuple[str, str]] | None = None, embed: Embed | None = None
) -> dict[str, tuple[str, float]]:
    """Group key -> (kind, probability) for every name of the corpus; a labeled name gets its label (1.0).

    ``embed``: the sentence encoder for context vectors (``context.py``); without it the evidence alone decides.
    """
    keys = list(corpus.names)
    train = training_set(corpus, load_labels() if labels is None else labels)
    if len(train) < MIN_LABELED or len(set(train.values())) < 3:  # too few to fit: rules, and the lexicon
        return {
            k: (train[k], 1.0) if k in train else (rule_kind(corpus.names[k].name, corpus.names[k]), 0.0) for k in keys
        }

    def row(key: str) -> dict[str, float]:  # the labels are the lexicon of the neighbour features
        ev = corpus.names[key]
        return {**features(key, ev), **neighbour_features(ev, neighbours(ev, corpus.lookup), train)}

    rows = [row(k) for k in train]
    vectors = context_vectors(corpus, list(train), embed) if embed is not None else None
    # method precision: the margin by inner cross-validation on the labels (never on the names it classifies)
    decider = Decider.fit(rows, list(train.values()), list(train), vectors)
    rest = [k for k in keys if k not in train]

    def vectors_of(indices: list[int]) -> np.ndarray:
        assert embed is not None
        return context_vectors(corpus, [rest[i] for i in indices], embed)

    got = decider.predict([row(k) for k in rest], vectors_of if embed is not None else None)
    predicted = dict(zip(rest, got, strict=True))
    predicted.update({k: ("hardware", 0.0) for k in rest if HARDWARE.match(corpus.names[k].name)})
    # a labeled name keeps its label: the labels are the ground truth the model only approximates
    predicted.update({k: (kind, 1.0) for k, kind in train.items()})
    return predicted


def introducing(ev: Evidence) -> int | None:
    """The paper that introduces the name: the earliest whose title starts with it or whose abstract says "we
    propose X" (``extract``), if at most ``PRIOR_MENTIONS`` documents mention the name before it; else None."""
    if not ev.intro_docs:
        return None
    first = ev.intro_docs[0]
    return first if bisect_left(ev.docs, first) <= PRIOR_MENTIONS else None


def _months(first: str, last: str) -> list[str]:
    y, m = int(first[:4]), int(first[5:7])
    out = []
    while f"{y:04d}-{m:02d}" <= last[:7]:
        out.append(f"{y:04d}-{m:02d}")
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return out


def _name(corpus: Corpus, ev: Evidence, kind: str, score: float, recent_start: str, as_of: str) -> Name:
    first = ev.docs[0]
    # a generic term ("LLM-based", "Fine-Tuning") has no introducing paper, whatever a sentence says
    intro = introducing(ev) if kind != "generic" else None
    shown = ev.name
    aliases = [s for s, _ in ev.spellings.most_common() if s != shown]
    aliases += [s for s, _ in ev.variants.most_common(MAX_ALIASES) if s != shown and s not in aliases]
    per_month = Counter(corpus.dates[i][:7] for i in ev.docs)
    return Name(
        name=shown,
        kind=kind,
        kind_score=score,
        aliases=tuple(aliases[:MAX_ALIASES]),
        introduced_by=corpus.ids[intro] if intro is not None else None,
        first_seen=corpus.dates[first],
        first_id=corpus.ids[first],
        count=ev.n_docs,
        recent_count=sum(corpus.dates[i] >= recent_start for i in ev.docs),
        baseline_mentions=len(ev.compared_docs),
        recent_baseline_mentions=sum(corpus.dates[i] >= recent_start for i in ev.compared_docs),
        code=tuple(corpus.code.get(intro, ())) if intro is not None else (),
        series=tuple((p, per_month.get(p, 0)) for p in _months(corpus.dates[first], as_of)),
    )


def find_names(
    documents: Iterable[TextDocument],
    as_of: date | str | None = None,
    *,
    min_docs: int = 3,
    recent_days: int = 30,
    labels: Sequence[tuple[str, str]] | None = None,
    embed: Embed | None = None,
) -> list[Name]:
    """The named things of the documents published on or before ``as_of`` (default: the newest document),
    mentioned in at least ``min_docs`` documents, most mentioned first.

    ``labels``: (name, kind) pairs to fit the kind classifier on (default: the shipped names_dev labels).
    ``embed``: a sentence encoder (texts -> unit vectors) for the context vectors of names the evidence leaves
    unsure (``context.py``; the composition root injects the packaged model); None: evidence only.
    Deterministic: the same documents give the same names.
    """
    if min_docs < 1 or recent_days < 1:
        raise NamesError("min_docs and recent_days must be at least 1")
    cutoff = as_of.isoformat() if isinstance(as_of, date) else (as_of or "")
    corpus = collect(documents, cutoff, min_docs)
    if not corpus.ids:
        return []
    end = cutoff or corpus.dates[-1]
    recent_start = (date.fromisoformat(end) - timedelta(days=recent_days - 1)).isoformat()
    kinds = classify(corpus, labels, embed)
    out = [_name(corpus, ev, *kinds[k], recent_start, end) for k, ev in corpus.names.items()]
    out.sort(key=lambda n: (-n.count, n.name))
    return out


def kind_of(surface: str, names: Iterable[Name]) -> str | None:
    """The kind of a name by any of its spellings (Qwen-3.5, Qwen3.5-9B-Instruct, LoRAs), None if unknown.

    For many look-ups build ``name_index(names)`` once and use its ``get(surface_key(s))``.
    """
    found = name_index(names).get(surface_key(surface))
    return found.kind if found is not None else None


def name_index(names: Iterable[Name]) -> dict[str, Name]:
    """Spelling key (``aliases.surface_key``) of every name and alias -> the name."""
    index: dict[str, Name] = {}
    for n in names:
        for s in (n.name, *n.aliases):
            index.setdefault(surface_key(s), n)
    return index
