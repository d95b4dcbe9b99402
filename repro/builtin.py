"""The built-in presets by name, read-only: repro/presets.py's (2024 to mid-2025) and repro/presets_2025.py's."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from radar.repro.method_types import Method
from radar.repro.presets import EARLY
from radar.repro.presets_2025 import LATE

METHODS: Mapping[str, Method] = MappingProxyType({m.name: m for m in (*EARLY, *LATE)})
