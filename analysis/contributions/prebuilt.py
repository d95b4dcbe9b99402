"""Prebuilt contributions: what the shipped model decided for the papers of a corpus file, shipped beside it
(``NAME.jsonl.gz`` -> ``NAME_contributions.jsonl.gz``), as the vectors are (``NAME_vectors.npz``).

`radar import` reuses a paper's prebuilt row and mentions only where the file's model version is the model
deciding now and the paper's content hash is the stored one; every other paper is decided as usual. The
result is the same table a fresh decision gives (``tests/test_contributions_prebuilt.py`` decides a sample
again and compares). The file is untrusted input: anything malformed makes it unused, with one line saying
why, and nothing stored changes because of it.

Format (gzip, JSON lines): a header ``{"format": FORMAT, "model": VERSION, "papers": N, "fields": ROW_FIELDS}``,
then one line per paper ``[doc_id, content_hash, row, mentions]``, ``row`` the ``ContributionRow`` fields
``ROW_FIELDS`` in order and ``mentions`` a list of ``[key, compared, expansion]``.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from pathlib import Path

import msgspec
import orjson

from radar.analysis.contributions.table import ContributionRow, Mention
from radar.store.text import fold_lookalikes

FORMAT = "radar-contributions/1"
# the ``ContributionRow`` fields a line holds, in order: all but those the reader knows (id, hash, model) or that are
# filled later (the endpoint's line, the day)
ROW_FIELDS = tuple(
    f.name
    for f in fields(ContributionRow)
    if f.name not in ("doc_id", "content_hash", "model", "changes_rewritten", "published")
)
MAX_BYTES = 64 * 1024 * 1024  # decompressed (the snapshot's is 7.4 MB): a larger file is not one (a gzip bomb)
MAX_TEXT = 2000  # characters of one string field


class PrebuiltError(ValueError):
    """A prebuilt contributions file that cannot be used (one line: which file, what is wrong)."""


def beside(corpus: Path) -> Path:
    """Where a corpus file's shipped contributions live: ``NAME.jsonl[.gz]`` -> ``NAME_contributions.jsonl.gz``."""
    name = corpus.name.removesuffix(".gz").removesuffix(".jsonl")
    return corpus.with_name(f"{name}_contributions.jsonl.gz")


@dataclass(frozen=True, slots=True)
class PrebuiltContributions:
    path: Path
    model: str
    papers: dict[tuple[str, str], tuple[ContributionRow, tuple[Mention, ...]]]  # (doc id, content hash) ->

    def get(self, doc_id: str, content_hash: str) -> tuple[ContributionRow, tuple[Mention, ...]] | None:
        return self.papers.get((doc_id, content_hash))

    def __len__(self) -> int:
        return len(self.papers)


def write(path: Path, model: str, papers: Iterable[tuple[ContributionRow, Iterable[Mention]]]) -> int:
    """Write ``papers`` (rows decided by ``model``, with their mentions) to ``path``; returns how many."""
    lines = []
    for row, found in papers:
        if row.model != model:
            raise ValueError(f"{row.doc_id} was decided by {row.model}, not {model}")
        values = [getattr(row, f) for f in ROW_FIELDS]
        lines.append(
            orjson.dumps(
                [row.doc_id, row.content_hash, values, [[m.key, m.compared, m.expansion] for m in found]],
                option=orjson.OPT_SERIALIZE_DATACLASS,
            )
        )
    header = orjson.dumps({"format": FORMAT, "model": model, "papers": len(lines), "fields": list(ROW_FIELDS)})
    tmp = path.with_name(path.name + ".tmp")
    with gzip.GzipFile(tmp, "wb", compresslevel=9, mtime=0) as out:  # mtime 0: the same input, the same bytes
        out.write(header + b"\n")
        for line in lines:
            out.write(line + b"\n")
    tmp.replace(path)
    return len(lines)


def read(path: Path, model: str) -> PrebuiltContributions:
    """The prebuilt contributions at ``path`` for ``model``; PrebuiltError when the file is not one, or was
    decided by another model version (then it is simply out of date)."""
    try:
        with gzip.open(path, "rb") as f:
            raw = f.read(MAX_BYTES + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise PrebuiltError(f"{path.name}: not a readable gzip file ({exc})") from None
    if len(raw) > MAX_BYTES:
        raise PrebuiltError(f"{path.name}: larger than {MAX_BYTES >> 20} MiB decompressed; not a contributions file")
    lines = raw.splitlines()
    try:
        header = orjson.loads(lines[0]) if lines else None
    except orjson.JSONDecodeError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise PrebuiltError(f"{path.name}: not a {FORMAT} file (its first line is not the header)")
    if header.get("model") != model:
        raise PrebuiltError(f"{path.name}: decided by model {header.get('model')!r}, not {model!r} (out of date)")
    if header.get("fields") != list(ROW_FIELDS):  # a stored field added or removed since it was built
        raise PrebuiltError(f"{path.name}: built for other row fields than {', '.join(ROW_FIELDS)} (out of date)")
    papers: dict[tuple[str, str], tuple[ContributionRow, tuple[Mention, ...]]] = {}
    for number, line in enumerate(lines[1:], 2):
        try:
            doc_id, content_hash, values, found = orjson.loads(line)
            row = _row(doc_id, content_hash, model, values)
            mentions = tuple(_mention(doc_id, m) for m in found)
        except (orjson.JSONDecodeError, TypeError, ValueError) as exc:
            raise PrebuiltError(f"{path.name}: line {number} is not a paper's contribution ({exc})") from None
        papers[(doc_id, content_hash)] = (row, mentions)
    if header.get("papers") != len(papers):
        raise PrebuiltError(f"{path.name}: holds {len(papers)} papers, its header says {header.get('papers')!r}")
    return PrebuiltContributions(path, model, papers)


def _text(value: object) -> str:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise TypeError("a text field is not a string of at most 2,000 characters")
    return value


def _bounded(value: object) -> None:
    """Strings of at most ``MAX_TEXT`` characters, lists of at most 100 of them (msgspec checks the types)."""
    if isinstance(value, str):
        _text(value)
    elif isinstance(value, list):
        if len(value) > 100:
            raise TypeError("a list field is not a list of at most 100 strings")
        for v in value:
            _text(v)


def _row(doc_id: object, content_hash: object, model: str, values: object) -> ContributionRow:
    if not isinstance(values, list) or len(values) != len(ROW_FIELDS):
        raise TypeError(f"a row has not the {len(ROW_FIELDS)} fields {', '.join(ROW_FIELDS)}")
    for v in values:
        _bounded(v)
    data = dict(zip(ROW_FIELDS, values, strict=True))
    data |= {"doc_id": _text(doc_id), "content_hash": _text(content_hash), "model": model, "changes_rewritten": ""}
    row = msgspec.convert(data, ContributionRow)  # every type checked (a bool is no score, a number no bool)
    return replace(row, name_key=fold_lookalikes(row.name_key))  # keys built before lookalikes folded


def _mention(doc_id: str, value: object) -> Mention:
    if not isinstance(value, list) or len(value) != 3 or not isinstance(value[1], bool):
        raise TypeError("a mention is not [key, compared, expansion]")
    return Mention(doc_id, _text(value[0]), value[1], _text(value[2]))
