"""The shipped labels: 300 papers hand-labeled for what each introduces (``labels/introductions_dev.jsonl``)
and their texts (``labels/papers.jsonl.gz``); field definitions in ``labels/SOURCES.md``."""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

import orjson

from radar.analysis.contributions.errors import ContributionsError
from radar.analysis.label_lines import json_lines
from radar.analysis.names.find import SHARED_LABEL_FILES
from radar.analysis.names.find import load_labels as load_name_labels

KINDS = ("method", "model", "system", "benchmark", "hardware", "other")
AREAS = ("rl-post-training", "hardware-systems", "other-llm", "other")
LAB_AREAS = ("rl-post-training", "hardware-systems")  # the taxonomy's two groups
LEAD_KINDS = ("method", "system")  # what a lead wants flagged in the lab's areas


@dataclass(frozen=True, slots=True)
class Introduction:
    """What one paper introduces, as labeled (``Label``) or predicted (``evaluate.Predicted``): the fields scored."""

    doc_id: str
    introduces: bool
    name: str
    also: tuple[str, ...]
    kind: str
    area: str
    builds_on: tuple[str, ...]
    changes: str


@dataclass(frozen=True, slots=True)
class Label(Introduction):
    """What annotators say one paper introduces (INTRODUCTIONS.md of the shared labels)."""

    week: str  # ISO week, YYYY-Www
    lead_should_see: bool


@dataclass(frozen=True, slots=True)
class LabeledPaper:
    label: Label
    title: str
    abstract: str
    categories: tuple[str, ...]
    published: str

    @property
    def id(self) -> str:
        """The labeled paper's id: a labeled paper is a text the contributions read (``find.PaperText``)."""
        return self.label.doc_id


def _label(line: str) -> Label:
    r = orjson.loads(line)
    return Label(
        doc_id=str(r["id"]),
        week=str(r["week"]),
        introduces=bool(r["introduces"]),
        name=str(r.get("name") or ""),
        also=tuple(str(a) for a in r.get("also") or ()),
        kind=str(r.get("kind") or ""),
        area=str(r["area"]),
        builds_on=tuple(str(b) for b in r.get("builds_on") or ()),
        changes=str(r.get("changes") or ""),
        lead_should_see=bool(r.get("lead_should_see")),
    )


def parse_labels(text: str) -> list[Label]:
    return json_lines(
        text,
        _label,
        lambda n: ContributionsError(
            f"introduction labels line {n} is not a JSON object with id, week, introduces and area; fix that line"
        ),
    )


def load_labeled(name: str = "introductions_dev.jsonl") -> list[LabeledPaper]:
    """The shipped labeled papers of one label file (the three weeks every figure is measured on, by default), in
    the file's order."""
    folder = resources.files("radar.analysis.contributions").joinpath("labels")
    labels = parse_labels(folder.joinpath(name).read_text("utf-8"))
    texts = {}
    with gzip.open(folder.joinpath("papers.jsonl.gz").open("rb"), "rb") as fh:
        for line in fh:
            r = orjson.loads(line)
            texts[r["id"]] = r
    missing = [lab.doc_id for lab in labels if lab.doc_id not in texts]
    if missing:
        raise ContributionsError(f"labels/papers.jsonl.gz lacks {len(missing)} labeled papers; rebuild it (SOURCES.md)")
    return [
        LabeledPaper(
            label=lab,
            title=texts[lab.doc_id]["title"],
            abstract=texts[lab.doc_id]["abstract"],
            categories=tuple(texts[lab.doc_id].get("categories") or ()),
            published=str(texts[lab.doc_id].get("published") or "")[:10],
        )
        for lab in labels
    ]


@dataclass(frozen=True, slots=True)
class Training:
    """What the shipped model is fitted on beside the measured weeks: papers labeled in full (``more``: three more
    weeks, introductions_dev2) and papers labeled only for what they introduce, its name, kind and area
    (``partial``: 867 papers of 124 other weeks, introductions_extra). None falls in a measured week."""

    more: list[LabeledPaper]
    partial: list[LabeledPaper]


def load_training() -> Training:
    """The shipped training-only labels, checked disjoint from the measured weeks (``disjoint``)."""
    training = Training(load_labeled("introductions_dev2.jsonl"), load_labeled("introductions_extra.jsonl"))
    disjoint(load_labeled(), training)
    return training


def disjoint(measured: Sequence[LabeledPaper], training: Training) -> None:
    """Refuse training labels in a measured week or of a measured paper: what is measured is never trained on."""
    train = [*training.more, *training.partial]
    weeks = sorted({p.label.week for p in train} & {p.label.week for p in measured})
    ids = sorted({p.label.doc_id for p in train} & {p.label.doc_id for p in measured})
    if weeks or ids:
        raise ContributionsError(f"training labels fall in the measured weeks or papers: {', '.join(weeks + ids)}")


@dataclass(frozen=True, slots=True)
class KindExample:
    """A paper whose title starts with a name labeled with its kind (the names stage's title-prefix labels)."""

    doc_id: str
    name: str
    kind: str
    title: str
    abstract: str
    categories: tuple[str, ...]


def load_kind_examples() -> list[KindExample]:
    """Extra kind examples: ``labels/kinds_extra.jsonl.gz`` (SOURCES.md says where they come from)."""
    folder = resources.files("radar.analysis.contributions").joinpath("labels")
    out = []
    with gzip.open(folder.joinpath("kinds_extra.jsonl.gz").open("rb"), "rb") as fh:
        for line in fh:
            r = orjson.loads(line)
            out.append(
                KindExample(r["id"], r["name"], r["kind"], r["title"], r["abstract"], tuple(r.get("categories") or ()))
            )
    return out


def load_lexicon() -> dict[str, str]:
    """Labeled kinds of names (lower-cased name -> kind: GRPO method, LLMs generic, GPT-4 model): the names
    stage's shipped label files (``analysis/names/labels``, the one copy both stages read), the first label of
    a name kept. The shared labels only (``SHARED_LABEL_FILES``): the names stage's extra training names are
    not in the lexicon the contribution model was fitted and backtested with."""
    out: dict[str, str] = {}
    for name, kind in load_name_labels(files=SHARED_LABEL_FILES):
        out.setdefault(name.lower(), kind)
    return out
