"""Resolvers: one place that turns settings into the objects each stage is handed.

Every swappable stage has a small Protocol at its seam (``Embedder`` in index.embedder,
``Summarizer`` in reports.summarize, ``Notifier`` in reports.deliver, ``TrendDetector`` below) and one
resolver here (the search resolvers in app/wiring_search.py, re-exported). Tests inject a fake by passing it to
the step that needs it (``steps.*(..., embedder=fake)``) where the test is about something else; everywhere else
the real component comes from here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from radar.analysis.contributions.cards import MethodCard
from radar.analysis.contributions.week import introduced_methods
from radar.analysis.names.context import Embed
from radar.analysis.names.stage import name_kinds
from radar.analysis.tags.errors import TaggingError
from radar.analysis.tags.tagger import TagEnv, Vectors
from radar.analysis.trends.compute import TrendsEnv
from radar.analysis.trends.methods import KINDS as TREND_KINDS
from radar.analysis.trends.methods import Introductions
from radar.app import steps_contributions
from radar.app.context import Radar
from radar.app.reproductions import Reproductions
from radar.app.wiring_search import embedder as embedder
from radar.app.wiring_search import index_paths as index_paths
from radar.app.wiring_search import open_searcher as open_searcher
from radar.app.wiring_search import prebuilt_vectors as prebuilt_vectors
from radar.app.wiring_search import searcher as searcher
from radar.index.config import EmbeddingConfig
from radar.index.embedder import Embedder, make_embedder, model_id_for, resolve_model_dir
from radar.index.errors import NothingIndexed
from radar.index.pipeline import stored_model
from radar.reports.summarize import Summarizer, make_summarizer
from radar.repro.methods import BUILTIN, Catalog, catalog
from radar.repro.plugins.catalog import plugin_catalog
from radar.store import Store
from radar.store.table import Database

# -- embedder and search: app/wiring_search.py (imported above: index_paths, prebuilt_vectors, embedder, searcher,
# open_searcher), which `radar search` imports alone


# -- names ---------------------------------------------------------------------------------------------
def name_encoder(radar: Radar) -> Embed:
    """The sentence encoder of names' context vectors (``analysis.names.context``): the packaged model on the
    CPU whatever [embedding] says (the kinds were measured with it), made on first use: only when the kind
    classifier runs and leaves some names unsure."""
    made: list[Embedder] = []

    def embed(texts: Sequence[str]) -> np.ndarray:
        if not made:
            cfg = EmbeddingConfig(threads=radar.settings.embedding.threads)
            made.append(make_embedder(cfg, device="cpu", cache_dir=radar.ws.model_cache_dir))
        return made[0].embed(texts)

    return embed


# -- tagging ---------------------------------------------------------------------------------------------
def tag_vectors(radar: Radar, store: Database, *, allow_empty: bool = False) -> Vectors:
    """The embedding model whose vectors the workspace holds (as search picks it). With ``allow_empty`` a
    workspace with nothing embedded gets the model `radar index` would use on this CPU."""
    cfg = radar.settings.embedding
    try:
        model_id, precision = stored_model(store, cfg)
    except NothingIndexed:
        if not allow_empty:
            raise TaggingError("nothing is embedded yet; run `radar index` first, then `radar tag`") from None
        int8 = cfg.int8_on("cpu")
        model_id, precision = model_id_for(cfg, resolve_model_dir(cfg.model), int8=int8), "int8" if int8 else "fp"

    def make() -> Embedder:
        return embedder(radar, device="cpu", precision=precision)

    return Vectors(model_id, precision, radar.ws.model_cache_dir, make)


def tag_env(radar: Radar, store: Database, *, allow_empty: bool = False) -> TagEnv:
    settings = radar.settings
    return TagEnv(
        config=settings.tagging,
        taxonomy=radar.taxonomy,
        vectors=tag_vectors(radar, store, allow_empty=allow_empty),
        model_path=radar.ws.tag_model_path,
        label_paths=settings.label_paths,
        legacy_model_path=radar.ws.legacy_tag_model_path,
    )


# -- trends -------------------------------------------------------------------------------------------------
def trends_env(radar: Radar, store: Store) -> TrendsEnv:  # the Store: kind_of and introductions are bound to it
    """Everything the trends stage needs, complete: its config and caches, the taxonomy's groups, the method
    cards its new methods come from (``introductions``) and the kinds of names on ``store`` (``kind_of``: the
    names stage, computed on first look-up only, for the plain first-seen list without cards)."""
    settings = radar.settings
    return TrendsEnv(
        config=settings.trends,
        embedding=settings.embedding,
        term_cache=radar.ws.term_cache_path,
        topics_dir=radar.ws.topics_dir,
        tag_groups=radar.tag_groups(),
        introductions=introductions(radar, store),
        kind_of=_lazy_kinds(store),
        parts_dir=radar.ws.trends_parts_dir,
        methods_version=lambda: steps_contributions.version(radar, store),
    )


def _lazy_kinds(store: Database) -> Callable[[str], str | None]:
    """kind_of(name) of the names stage on ``store``, its index built at the first look-up (trends with method
    cards never looks one up, so the names are not computed for them)."""
    found: list[Callable[[str], str | None]] = []

    def kind_of(name: str) -> str | None:
        if not found:
            found.append(name_kinds(store))
        return found[0](name)

    return kind_of


def introductions(radar: Radar, store: Database) -> Introductions:
    """(first day, last day) -> the method cards of what that span's papers on ``store`` introduce in the lab's
    areas, of the kinds trends lists (the reproduction presets and tag groups of this workspace). A read: the
    command brings the contributions up to date first (``steps_contributions.refresh``)."""

    def found(since: str, until: str) -> list[MethodCard]:
        return introduced_methods(
            store,
            since,
            until,
            steps_contributions.presets(radar),
            kinds=TREND_KINDS,
            groups=steps_contributions.tag_groups(radar),
        )

    return found


# -- report ---------------------------------------------------------------------------------------------------
def summarizer(radar: Radar) -> Summarizer:
    """Extractive sentences, or an OpenAI-compatible endpoint when [report] summary_endpoint is set."""
    return make_summarizer(radar.settings.report)


# -- reproductions -------------------------------------------------------------------------------------------
def repro_presets() -> dict[str, str]:
    """The built-in reproduction presets by name -> title (``repro_catalog(radar).titles()`` adds radar.toml's)."""
    return BUILTIN.titles()


def preset_knobs(found: Catalog) -> dict[str, str]:
    """What each reproduction preset of ``found`` (``repro_catalog``) sets, in a reason's words: "built-in preset;
    TRL GRPOConfig epsilon_high, loss_type; overlong shaping; dynamic sampling" (the settings it changes against its
    baseline)."""
    out = {}
    for name, method in found.methods.items():
        own = ("overlong_shaping", "dynamic_sampling", "loss_plugin", "advantage", "batch", "plugin_args")
        fields = [c for c in method.changes if c not in own]
        parts = [f"{found.source(name)} preset"] + ([f"TRL GRPOConfig {', '.join(fields)}"] if fields else [])
        parts += ["overlong shaping"] * method.overlong_shaping + ["dynamic sampling"] * method.dynamic_sampling
        parts += [f"{point} plug-in {plugin}" for point, plugin in method.plugins().items()]
        out[name] = "; ".join(parts)
    return out


def repro_catalog(radar: Radar) -> Catalog:
    """The presets a run may name: the built-ins plus radar.toml's [[repro.presets]] (validated with the settings),
    with the plug-ins of the installed packages (the ``radar.repro.plugins`` entry points) beside the built-ins."""
    return catalog(radar.settings.repro.presets, plugin_catalog())


def reproductions(radar: Radar, found: Catalog | None = None) -> Reproductions:
    """The repro API of the workspace: submit, list, cancel, export and the queue (app/reproductions.py), on the
    preset catalog ``found`` when the command resolved it already (else ``repro_catalog``)."""
    return Reproductions(radar.ws, radar.settings.repro, found or repro_catalog(radar))
