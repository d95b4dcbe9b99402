"""radar.toml, read once: every stage's config dataclass, validated when the file is loaded.

The composition root (this package) is the only reader of radar.toml. Each stage owns its config
dataclass and its checks (errors name the key and the fix); `load_settings` parses the file once,
builds them all, and resolves the paths the file names (relative to the workspace). Stages receive
the one dataclass they need and never see the file or the workspace.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from radar.analysis.tags.config import TaggingConfig
from radar.analysis.trends.config import TrendsConfig
from radar.app.serving import AppConfig, DashboardConfig
from radar.crawler.config import CrawlConfig, CrawlerConfig, Source, crawler_config
from radar.index.config import EmbeddingConfig, SearchConfig
from radar.reports.config import DeliveryConfig, Profile, ReportConfig
from radar.store import Config, Workspace
from radar.store.config import TomlTable, dataclass_from
from radar.store.errors import ConfigError, RadarError


@dataclass(frozen=True)
class ReproConfig:
    """[repro]: what `radar weekly` reproduces and how (the same defaults as `radar repro run`), and the
    user presets ([[repro.presets]]: a built-in preset plus the TRL settings that differ)."""

    weekly_runs: int = 0  # reproductions `radar weekly` may queue per week (0: the weekly job queues none)
    run_queued: bool = True  # start a background worker for queued runs; false: leave them to `radar repro work`
    device: str = "auto"  # auto, cpu or cuda
    seeds: int = 5  # seed pairs per run
    task: str = "addition"  # the toy task (ignored when dataset is set)
    dataset: str = ""  # a JSONL of {prompt, answer} (relative to the workspace); "" = the toy task
    model: str = ""  # a local Hugging Face folder or cached name; "" = the tiny char-level policy
    lora: bool = False  # train LoRA adapters on the model (`--lora`; needs model)
    preset: str = "tiny"  # policy/batch size preset (`--preset`)
    steps: int = 0  # optimiser steps per arm; 0 = the size preset's default
    presets: tuple[Any, ...] = field(default_factory=tuple)  # [[repro.presets]] tables, validated below

    def __post_init__(self) -> None:
        # defers repro's catalog (~30 ms at every start: every command reads settings)
        from radar.repro.methods import user_presets
        from radar.repro.plugins.catalog import plugin_catalog
        from radar.repro.sizes import SIZES
        from radar.repro.tasks import TASKS

        if not 0 <= self.weekly_runs <= 20:
            raise ConfigError(f"[repro] weekly_runs must be between 0 and 20 (got {self.weekly_runs})")
        if self.device not in ("auto", "cpu", "cuda"):
            raise ConfigError(f"[repro] device must be auto, cpu or cuda (got {self.device!r})")
        if not 1 <= self.seeds <= 20:
            raise ConfigError(f"[repro] seeds must be between 1 and 20 (got {self.seeds})")
        if not 0 <= self.steps <= 100_000:
            raise ConfigError(f"[repro] steps must be between 0 (the preset's default) and 100000 (got {self.steps})")
        if self.task not in TASKS:
            raise ConfigError(f"[repro] task {self.task!r} is not one of {', '.join(TASKS)}")
        if self.preset not in SIZES:
            raise ConfigError(f"[repro] preset {self.preset!r} is not one of {', '.join(SIZES)}")
        try:
            # one line naming the fix (unknown settings and plug-ins list the valid ones)
            user_presets(self.presets, plugin_catalog() if self.presets else None)
        except RadarError as exc:
            raise ConfigError(str(exc)) from None

    @classmethod
    def from_section(cls, table: TomlTable) -> ReproConfig:
        return dataclass_from(cls, table, "[repro]")


@dataclass(frozen=True)
class Settings:
    """Everything radar.toml says, one typed field per section."""

    root: Path
    config: Config  # the parsed tables (`with_formats`, `with_app` validate an override again)
    crawler: CrawlerConfig  # [crawl] and [[sources]], source locations resolved
    embedding: EmbeddingConfig
    search: SearchConfig
    tagging: TaggingConfig
    trends: TrendsConfig
    report: ReportConfig
    profile: Profile
    delivery: DeliveryConfig
    app: AppConfig
    dashboard: DashboardConfig  # [dashboard] public_url: links into the dashboard from mails
    repro: ReproConfig  # [repro] and its [[repro.presets]]
    taxonomy_path: Path | None  # [tagging] taxonomy, resolved; None = the packaged default
    label_paths: tuple[Path, ...]  # [tagging] labels, resolved

    @property
    def crawl(self) -> CrawlConfig:
        return self.crawler.crawl

    @property
    def sources(self) -> tuple[Source, ...]:
        return self.crawler.sources

    def with_formats(self, formats: str | None) -> Settings:
        """The same settings with `--format` overriding [report] formats (validated like the file)."""
        if formats is None:
            return self
        return replace(self, report=ReportConfig.from_section(self.config.section("report"), formats))

    def with_app(self, **overrides: Any) -> Settings:
        """The same settings with command-line overrides of [app] (e.g. --port)."""
        given = {k: v for k, v in overrides.items() if v is not None}
        return replace(self, app=AppConfig.from_section(self.config.section("app") | given)) if given else self


def resolve_location(ws: Workspace, location: str) -> str:
    """A source url/base_url from radar.toml: a URL (``scheme://``) as written; a path (relative to the
    workspace folder, or absolute) becomes a file:// URL, so a workspace with its feeds inside can move."""
    if not location or "://" in location:
        return location
    try:
        uri = ws.resolve(location).resolve().as_uri()
    except (ValueError, OSError):  # e.g. a NUL byte: left as written, the crawler says what is wrong with it
        return location
    return uri + "/" if location.endswith("/") and not uri.endswith("/") else uri


def _repro(ws: Workspace, cfg: ReproConfig) -> ReproConfig:
    """[repro] dataset resolved against the workspace folder (a model name stays as written)."""
    return replace(cfg, dataset=str(ws.resolve(cfg.dataset))) if cfg.dataset else cfg


def load_settings(ws: Workspace) -> Settings:
    """Parse ws's radar.toml once into every stage's validated config."""
    config = ws.config()
    crawler = crawler_config(config).with_locations(lambda location: resolve_location(ws, location))
    tagging = TaggingConfig.from_section(config.section("tagging"))
    return Settings(
        root=ws.root,
        config=config,
        crawler=crawler,
        embedding=EmbeddingConfig.from_section(config.section("embedding")),
        search=SearchConfig.from_section(config.section("search")),
        tagging=tagging,
        trends=TrendsConfig.from_section(config.section("trends")),
        report=ReportConfig.from_section(config.section("report")),
        profile=Profile.from_section(config.section("profile")),
        delivery=DeliveryConfig.from_section(config.section("delivery")),
        app=AppConfig.from_section(config.section("app")),
        dashboard=DashboardConfig.from_section(config.section("dashboard")),
        repro=_repro(ws, ReproConfig.from_section(config.section("repro"))),
        taxonomy_path=ws.resolve(tagging.taxonomy) if tagging.taxonomy else None,
        label_paths=tuple(ws.resolve(p) for p in tagging.labels),
    )
