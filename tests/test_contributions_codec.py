"""The contributions' one codec (msgspec): a stored row reads back as it was written, whatever its text; the model
files keep their bytes and reject a value of the wrong type; a prebuilt line of the wrong types is refused."""

from __future__ import annotations

import gzip
from pathlib import Path

import msgspec
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from radar.analysis.contributions import prebuilt
from radar.analysis.contributions.consequence import ConsequenceModel, shipped_consequence
from radar.analysis.contributions.errors import ContributionsError
from radar.analysis.contributions.linear import Linear, encode
from radar.analysis.contributions.model import ContributionModel, shipped_model
from radar.analysis.contributions.table import ContributionRow, Contributions
from radar.crawler.documents import Document, Documents
from radar.store import Store

ROOT = Path(__file__).resolve().parents[1]
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)  # any text SQLite and JSON carry
NAMES = st.lists(TEXT, max_size=4).map(tuple)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    introduces=st.booleans(),
    name=TEXT,
    also=NAMES,
    builds_on=NAMES,
    code=NAMES,
    changes=TEXT,
    score=st.floats(0, 1),
    kind_score=st.floats(0, 1),
)
def test_a_stored_row_reads_back_as_written(
    tmp_path: Path,
    introduces: bool,
    name: str,
    also: tuple[str, ...],
    builds_on: tuple[str, ...],
    code: tuple[str, ...],
    changes: str,
    score: float,
    kind_score: float,
) -> None:
    row = ContributionRow(
        "2501.00001", "h1", "m1", introduces, name, name.lower(), also, "method", "other", builds_on, changes, "",
        code, score, kind_score, published="2025-01-02",
    )  # fmt: skip
    with Store(Path(":memory:")) as store:
        Documents(store).upsert(
            [Document(id="2501.00001", kind="paper", source="arxiv", title="T", abstract="A.", published="2025-01-02")]
        )
        Contributions(store).write_contributions([row], [])
        assert Contributions(store).contributions(["2501.00001"])["2501.00001"] == row


def test_the_model_files_keep_their_bytes_and_versions() -> None:
    for model, name in ((shipped_model(), "model.json"), (shipped_consequence(), "consequence.json")):
        shipped = (ROOT / "analysis" / "contributions" / name).read_bytes().strip()
        assert encode(model) == shipped


def test_a_model_file_value_of_the_wrong_type_is_one_line() -> None:
    data = orjson.loads(encode(shipped_model()))
    data["name"]["bias"] = ["-1.5"]  # a string where a number belongs
    with pytest.raises(ContributionsError, match="damaged; rebuild it with"):
        ContributionModel.decode(orjson.dumps(data))
    data = orjson.loads(encode(shipped_consequence()))
    data["must_weight"] = True
    with pytest.raises(ContributionsError, match="damaged; rebuild it with"):
        ConsequenceModel.decode(orjson.dumps(data))


def test_a_fitted_model_is_stored_to_six_places() -> None:
    m = shipped_model()
    row = next(iter(m.name.weights))
    fitted = Linear(m.name.classes, {**m.name.weights, row: tuple(v + 1e-9 for v in m.name.weights[row])}, m.name.bias)
    noisy = msgspec.structs.replace(m, name=fitted)  # built as a fit builds it
    assert noisy.name.weights[row] == m.name.weights[row]  # the model is what its file holds
    assert orjson.loads(encode(noisy))["name"]["weights"][row] == list(m.name.weights[row])
    assert noisy.version == m.version


HEADER = {"format": prebuilt.FORMAT, "model": "c1", "papers": 1, "fields": list(prebuilt.ROW_FIELDS)}


def test_a_prebuilt_line_of_the_wrong_types_is_refused(tmp_path: Path) -> None:
    good = [True, "QAE", "qae", [], "method", "rl-post-training", ["GRPO"], "changes", [], 0.9, 0.8]
    for bad in ({0: 1}, {9: True}, {3: ["x", 2]}):  # introduces a number, a score true, a name not text
        values = list(good)
        for i, v in bad.items():
            values[i] = v
        path = tmp_path / "x_contributions.jsonl.gz"
        lines = [
            orjson.dumps(HEADER),
            orjson.dumps(["a", "h", values, []]),
        ]
        path.write_bytes(gzip.compress(b"\n".join(lines)))
        with pytest.raises(prebuilt.PrebuiltError, match="line 2 is not a paper's contribution"):
            prebuilt.read(path, "c1")
    path.write_bytes(
        gzip.compress(b"\n".join([orjson.dumps(HEADER),
                                  orjson.dumps(["a", "h", good, [["qae", False, ""]]])]))
    )  # fmt: skip
    assert prebuilt.read(path, "c1").get("a", "h") is not None


@pytest.mark.parametrize(
    ("table", "record", "besides"),
    [
        ("contributions", "radar.analysis.contributions.table:ContributionRow", {"computed_at", "-published"}),
        ("names", "radar.analysis.names.table:NameRow", {"computed_at"}),
        ("framework_entries", "radar.crawler.frameworks:FrameworkEntry", {"first_seen"}),
        ("framework_matches", "radar.analysis.contributions.adoptions:FrameworkMatch", set()),
    ],
)
def test_each_moved_record_names_its_tables_columns(tmp_path: Path, table: str, record: str, besides: set[str]) -> None:
    """The repositories map rows onto records by field name: every column is a field (but the write times; a
    contribution's ``published`` is the document's), so a column added by a migration needs its field."""
    import dataclasses
    import importlib

    module, name = record.split(":")
    cls = getattr(importlib.import_module(module), name)
    with Store(tmp_path / "radar.db") as store:
        columns = {r[1] for r in store.conn.execute(f"PRAGMA table_info({table})")}
    extra = {b[1:] for b in besides if b.startswith("-")}
    assert {f.name for f in dataclasses.fields(cls)} - extra == columns - besides
