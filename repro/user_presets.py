"""User presets: ``[[repro.presets]]`` tables of radar.toml, validated into ``Method`` values (one-line errors).

A user preset changes a built-in preset's settings: TRL GRPOConfig fields, reward shaping, sampling, and the
plug-ins of each point (``advantage``, ``loss_plugin``, ``batch``, names from the plug-in catalog, with
``advantage_args``, ``loss_args``, ``batch_args`` tables of their settings). An unknown plug-in name or setting is
refused in one line naming the registered ones.
"""

from __future__ import annotations

import re
from typing import Any, cast

from radar.repro.builtin import METHODS
from radar.repro.errors import ReproError
from radar.repro.method_types import (
    HELDOUT_MARGIN,
    Claim,
    Method,
    PluginArgs,
    PresetSettings,
    TrlSettings,
    baseline_of,
    plugin_fields,
    settings,
)
from radar.repro.plugins.catalog import BUILTIN_CATALOG, PluginCatalog

# The GRPOConfig fields a preset may change, with their kind; shared run fields (batch, steps, lr,
# num_iterations, lengths) stay the run's so that both arms see the same data (build_config refuses them).
CHOICES: dict[str, tuple[str, ...]] = {
    "loss_type": ("grpo", "dr_grpo", "dapo", "bnpo", "cispo", "sapo", "luspo", "vespo"),  # TRL 1.x
    "scale_rewards": ("group", "batch", "none"),
    "importance_sampling_level": ("token", "sequence"),
    "multi_objective_aggregation": ("sum_then_normalize", "normalize_then_sum"),
}
PLUGIN_SETTINGS = {"advantage": "advantage", "loss_plugin": "ratio/loss", "batch": "batch"}  # setting -> point
PLUGIN_ARGS = {"advantage_args": "advantage", "loss_args": "ratio/loss", "batch_args": "batch"}  # table -> point
NUMBERS = (
    "beta",
    "epsilon",
    "epsilon_high",
    "delta",
    "top_entropy_quantile",
    "sapo_temperature_pos",
    "sapo_temperature_neg",
    "vespo_k_pos",
    "vespo_k_neg",
    "vespo_lambda_pos",
    "vespo_lambda_neg",
    "off_policy_mask_threshold",
)
FLAGS = ("dynamic_sampling", "mask_truncated_completions", "overlong_shaping")
PRESET_SETTINGS: tuple[str, ...] = tuple(sorted((*CHOICES, *NUMBERS, *FLAGS, *PLUGIN_SETTINGS, *PLUGIN_ARGS)))
PRESET_KEYS = ("name", "base", "settings", "arxiv", "claim", "title", "baseline", "check")
CLAIM_METRICS = (
    "heldout_greedy",
    "heldout_pass1",
    "heldout",
    "entropy",
    "length",
    "correct_length",
    "incorrect_length",
    "clip_ratio",
    "kl",
    "correct",
    "frac_reward_zero_std",
)
_NAME = r"^[a-z0-9][a-z0-9_.-]{0,39}$"


def _setting(preset: str, key: str, value: Any) -> str | float | bool:
    where = f"[[repro.presets]] {preset!r}: setting {key}"
    if key in CHOICES:
        if value not in CHOICES[key]:
            shown = ", ".join(repr(c) for c in CHOICES[key])
            raise ReproError(f"{where} = {value!r} is not one of {shown}; fix it in radar.toml")
        return value
    if key in FLAGS:
        if not isinstance(value, bool):
            raise ReproError(f"{where} must be true or false, not {value!r}; fix it in radar.toml")
        return value
    if not isinstance(value, int | float) or isinstance(value, bool) or value != value or abs(value) > 1e6:
        raise ReproError(f"{where} must be a number, not {value!r}; fix it in radar.toml")
    if key in ("epsilon", "epsilon_high", "beta", "top_entropy_quantile", "off_policy_mask_threshold") and value < 0:
        raise ReproError(f"{where} must not be negative (got {value}); fix it in radar.toml")
    return float(value)


def _plugin(preset: str, key: str, value: Any, plugins: PluginCatalog) -> str:
    if not isinstance(value, str):
        raise ReproError(f"[[repro.presets]] {preset!r}: setting {key} must be a plug-in name (a string)")
    if value:
        try:
            plugins.get(PLUGIN_SETTINGS[key], value)
        except ReproError as exc:
            raise ReproError(f"[[repro.presets]] {preset!r}: setting {key}: {exc}") from None
    return value


def _plugin_args(preset: str, key: str, value: Any) -> dict[str, float]:
    where = f"[[repro.presets]] {preset!r}: {key}"
    if not isinstance(value, dict):
        raise ReproError(f"{where} must be a table of numbers, e.g. {{ k = 0.5 }}; fix it in radar.toml")
    out: dict[str, float] = {}
    for k, v in value.items():
        if isinstance(v, bool) or not isinstance(v, int | float) or v != v or abs(v) > 1e6:
            raise ReproError(f"{where}.{k} must be a number, not {v!r}; fix it in radar.toml")
        out[str(k)] = float(v)
    return out


def user_preset(table: Any, plugins: PluginCatalog = BUILTIN_CATALOG) -> Method:
    """A Method from one ``[[repro.presets]]`` table; every error is one line naming the fix."""
    if not isinstance(table, dict):
        raise ReproError("each [[repro.presets]] entry must be a table (name, base, settings, arxiv, claim)")
    name = table.get("name")
    label = repr(name) if isinstance(name, str) else "(no name)"
    unknown = sorted(set(table) - set(PRESET_KEYS))
    if unknown:
        raise ReproError(
            f"unknown key(s) {', '.join(unknown)} in [[repro.presets]] {label}; valid keys: {', '.join(PRESET_KEYS)}"
        )
    if not isinstance(name, str) or not re.match(_NAME, name):
        raise ReproError(
            f"[[repro.presets]] name {name!r} must be 1-40 lower-case letters, digits, '-', '_' or '.'; fix it"
        )
    if name in METHODS:
        raise ReproError(
            f"[[repro.presets]] {name!r} clashes with a built-in preset; choose another name "
            f"(built-in: {', '.join(METHODS)})"
        )
    base_name = table.get("base", "")
    if base_name not in METHODS:
        raise ReproError(
            f"[[repro.presets]] {name!r}: base {base_name!r} is not a built-in preset; "
            f"choose one of: {', '.join(METHODS)}"
        )
    base = METHODS[base_name]
    settings_table = table.get("settings", {})
    if not isinstance(settings_table, dict) or not settings_table:
        raise ReproError(
            f"[[repro.presets]] {name!r}: settings must be a non-empty table of the TRL settings that differ from "
            f"{base_name!r}; valid settings: {', '.join(PRESET_SETTINGS)}"
        )
    bad = sorted(set(settings_table) - set(PRESET_SETTINGS))
    if bad:
        raise ReproError(
            f"unknown setting(s) {', '.join(bad)} in [[repro.presets]] {name!r}; valid settings: "
            f"{', '.join(PRESET_SETTINGS)}"
        )
    named = {k: _plugin(name, k, settings_table[k], plugins) for k in PLUGIN_SETTINGS if k in settings_table}
    extra = {PLUGIN_ARGS[k]: _plugin_args(name, k, settings_table[k]) for k in PLUGIN_ARGS if k in settings_table}
    plain = {k: v for k, v in settings_table.items() if k not in PLUGIN_SETTINGS and k not in PLUGIN_ARGS}
    values = {k: _setting(name, k, v) for k, v in plain.items()}
    shaping = bool(values.pop("overlong_shaping", base.overlong_shaping))
    dynamic = bool(values.pop("dynamic_sampling", base.dynamic_sampling))
    plugin = named.get("loss_plugin", base.loss_plugin)
    advantage = named.get("advantage", base.advantage)
    batch = named.get("batch", base.batch)
    chosen = {"advantage": advantage, "ratio/loss": plugin, "batch": batch}
    plugin_args: PluginArgs = {p: dict(a) for p, a in base.plugin_args.items() if chosen.get(p)}
    for point, given in extra.items():
        if not chosen[point]:
            key = next(k for k, p in PLUGIN_ARGS.items() if p == point)
            raise ReproError(f"[[repro.presets]] {name!r}: {key} needs a {point} plug-in (set it in settings)")
        try:
            plugins.get(point, chosen[point]).settings(given)
        except ReproError as exc:
            raise ReproError(f"[[repro.presets]] {name!r}: {exc}") from None
        plugin_args[point] = {**plugin_args.get(point, {}), **given}
    # the settings but the three popped above are TrlSettings' keys, each value of its kind (_setting)
    config = cast(TrlSettings, {**base.config, **values})
    for key in ("arxiv", "claim", "title", "baseline"):
        if not isinstance(table.get(key, ""), str):
            raise ReproError(f"[[repro.presets]] {name!r}: {key} must be a string; fix it in radar.toml")
    arxiv = str(table.get("arxiv", "")).strip()
    if arxiv and not re.match(r"^\d{4}\.\d{4,5}(v\d+)?$", arxiv):
        raise ReproError(f"[[repro.presets]] {name!r}: arxiv {arxiv!r} is not an arXiv id like 2503.14476")
    baseline = str(table.get("baseline") or baseline_of(base))
    if baseline not in METHODS:
        raise ReproError(
            f"[[repro.presets]] {name!r}: baseline {baseline!r} is not a built-in preset; "
            f"choose one of: {', '.join(METHODS)}"
        )
    text = str(table.get("claim", "")).strip() or f"a configuration change of {base_name}"
    check = table.get("check")
    if check is None:
        claim = Claim(
            f"{text} (checked here: held-out greedy accuracy within 2 points of {baseline}'s)",
            "heldout_greedy",
            "not_lower",
            "end",
            HELDOUT_MARGIN,
        )
    else:
        keys = ("metric", "direction", "window", "margin", "min_effect")
        if not isinstance(check, dict) or set(check) - set(keys):
            raise ReproError(f"[[repro.presets]] {name!r}: check takes {', '.join(keys)}; fix it in radar.toml")
        if check.get("metric") not in CLAIM_METRICS:
            raise ReproError(
                f"[[repro.presets]] {name!r}: check metric {check.get('metric')!r} is not one of "
                f"{', '.join(CLAIM_METRICS)}"
            )
        for key in ("margin", "min_effect"):
            value = check.get(key, 0.0)
            if isinstance(value, bool) or not isinstance(value, int | float) or not abs(value) < 1e6:
                raise ReproError(f"[[repro.presets]] {name!r}: check {key} must be a number, not {value!r}")
        try:
            claim = Claim(text, **{k: v for k, v in check.items()})
        except TypeError as exc:
            raise ReproError(f"[[repro.presets]] {name!r}: check: {exc}") from None
    ref = METHODS[baseline]
    mine: PresetSettings = {
        **config,
        "overlong_shaping": shaping,
        "dynamic_sampling": dynamic,
        "loss_plugin": plugin,
    }
    mine |= plugin_fields(advantage, batch, plugin_args)
    theirs = settings(ref)
    changes = tuple(sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k)))
    return Method(
        name,
        str(table.get("title") or f"{name} (user preset: {base_name} + {', '.join(sorted(settings_table))})"),
        arxiv,
        config,
        claim,
        baseline=baseline if baseline != name else "",
        changes=changes,
        overlong_shaping=shaping,
        dynamic_sampling=dynamic,
        loss_plugin=plugin,
        advantage=advantage,
        batch=batch,
        plugin_args=plugin_args,
        levers=base.levers if baseline == baseline_of(base) else (),  # the same change against the same baseline
        notes=f"User preset from radar.toml: {base_name} with "
        + ", ".join(f"{k} = {v!r}" for k, v in sorted(settings_table.items())),
        deviations=base.deviations,
    )


def user_presets(tables: Any, plugins: PluginCatalog | None = BUILTIN_CATALOG) -> list[Method]:
    """Validate every ``[[repro.presets]]`` table (names unique, none a built-in's); ``plugins`` None: the
    built-ins."""
    plugins = plugins or BUILTIN_CATALOG
    if not isinstance(tables, list | tuple):
        raise ReproError("[repro] presets must be an array of tables: [[repro.presets]]")
    out: list[Method] = []
    for table in tables:
        method = user_preset(table, plugins)
        if any(m.name == method.name for m in out):
            raise ReproError(f"[[repro.presets]] {method.name!r} is defined twice; keep one")
        out.append(method)
    return out
