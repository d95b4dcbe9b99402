"""Run the real CLI in-process and capture what a user would see."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from radar.app.cli import main


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self):  # type: ignore[no-untyped-def]
        return json.loads(self.out)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> Result:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse usage errors and --help
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return Result(code, captured.out, captured.err)
