"""The built-in presets by name, read-only: two data tables beside this module, presets_2024.toml (2024 to mid-2025:
GRPO, DAPO, GSPO, CISPO, ...) and presets_2025.toml (QAE, PSPO, RL-ZVP, VCRL, NGRPO, Clip-Cov, ...), each preset one
``[[preset]]`` table converted into a ``Method`` by msgspec (types checked). A preset's ``config`` holds the TRL
settings that differ from GRPO's (``GRPO_SETTINGS``); its claim is a table or the name of one in the file's
``[claims]``; a lever's arm is the method's unless it names one. Nothing in them is executed.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import msgspec

from radar.repro.method_types import GRPO_SETTINGS, Method
from radar.store.config import TomlTable


def presets(file: str) -> tuple[Method, ...]:
    """The presets of one table beside this module, in its order."""
    doc = tomllib.loads(Path(__file__).with_name(file).read_text(encoding="utf-8"))
    claims: TomlTable = doc.get("claims", {})
    return tuple(_method(table, claims) for table in doc["preset"])


def _method(table: TomlTable, claims: TomlTable) -> Method:
    """One preset: its named claim and each lever's arm filled in, converted by msgspec, GRPO's settings under its
    own."""
    claim, levers = table["claim"], table.get("levers", [])
    arm: TomlTable = {"arm": "method"}  # a lever on the method's arm unless it names one
    filled: TomlTable = {
        "config": {},
        **table,
        "claim": claims[claim] if isinstance(claim, str) else claim,
        "levers": [arm | lever for lever in (levers if isinstance(levers, list) else []) if isinstance(lever, dict)],
    }
    method = msgspec.convert(filled, Method)
    return replace(method, config=GRPO_SETTINGS | method.config)


METHODS: Mapping[str, Method] = MappingProxyType(
    {m.name: m for m in (*presets("presets_2024.toml"), *presets("presets_2025.toml"))}
)
