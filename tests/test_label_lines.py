"""The shared reader of the shipped JSON-lines label files: blank lines skipped, every kind of bad line named by its
number in the stage's own error, nothing read past it."""

from __future__ import annotations

import msgspec
import orjson
import pytest

from radar.analysis.contributions.errors import ContributionsError
from radar.analysis.contributions.labels import parse_labels
from radar.analysis.label_lines import json_lines
from radar.analysis.names.errors import NamesError
from radar.analysis.names.find import load_labels


class Row(msgspec.Struct):
    name: str
    kind: str


def _pair(line: str) -> tuple[str, int]:
    r = orjson.loads(line)
    return str(r["name"]), int(r["n"])


def test_values_in_order_blank_lines_skipped() -> None:
    text = '{"name": "a", "n": 1}\n\n   \n{"name": "b", "n": 2}\n'
    assert json_lines(text, _pair, lambda n: ValueError(n)) == [("a", 1), ("b", 2)]
    assert json_lines(b'{"name": "x", "kind": "method"}', lambda b: msgspec.json.decode(b, type=Row), KeyError) == [
        Row("x", "method")
    ]


@pytest.mark.parametrize(
    "bad",
    [
        "{not json",  # not JSON
        '{"name": "b"}',  # a key missing
        '["b", 2]',  # not an object
        '{"name": "b", "n": "two"}',  # a value of another type
    ],
)
def test_a_bad_line_raises_the_callers_error_with_its_number(bad: str) -> None:
    text = '{"name": "a", "n": 1}\n\n' + bad + '\n{"name": "c", "n": 3}'
    with pytest.raises(LookupError, match="^3$"):
        json_lines(text, _pair, lambda n: LookupError(str(n)))


def test_a_struct_reader_bad_line_is_named() -> None:
    with pytest.raises(LookupError, match="^2$"):
        json_lines(
            b'{"name": "x", "kind": "m"}\n{"name": 1, "kind": "m"}',
            lambda b: msgspec.json.decode(b, type=Row),
            lambda n: LookupError(str(n)),
        )


def test_the_stages_readers_name_the_line_in_their_own_error() -> None:
    good = '{"id": "1", "week": "2025-W12", "introduces": false, "area": "other"}'
    with pytest.raises(ContributionsError, match="introduction labels line 3 .*fix that line"):
        parse_labels(good + "\n\n" + '{"id": "2", "week": "2025-W12"}')
    assert load_labels('{"name": "GRPO", "kind": "method"}\n{"name": "X", "kind": "unknown"}') == [("GRPO", "method")]
    with pytest.raises(NamesError, match="name labels line 2 .*fix that line"):
        load_labels('{"name": "GRPO", "kind": "method"}\n{"name": "X"}')
