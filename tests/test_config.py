from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from radar.crawler.config import ArxivRssSource, ArxivSource, FeedSource, Source, crawler_config
from radar.store import ConfigError, parse_config
from radar.store.config import DEFAULT_CONFIG_TEXT


def test_default_config_parses_with_arxiv_politeness() -> None:
    config = crawler_config(parse_config(DEFAULT_CONFIG_TEXT))
    arxiv = config.source("arxiv")
    assert arxiv.page_size == 2000 and arxiv.min_interval_s >= 3.0
    assert {s.type for s in config.sources} == {"arxiv", "arxiv-rss", "feed"}


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (
            '[[sources]]\nname="a"\ntype="arxiv"\nbase_url="https://export.arxiv.org/api/query"\n'
            'categories=["cs.LG"]\nmin_interval_s=1.0',
            "set min_interval_s >= 3",
        ),
        (
            '[[sources]]\nname="a"\ntype="arxiv"\nbase_url="http://127.0.0.1/api"\ncategories=["cs.LG"]\n'
            "page_size=5000",
            "page_size must be 1..2000",
        ),
        ('[[sources]]\nname="a"\ntype="feed"', "a feed needs url"),
        ('[[sources]]\nname="a"\ntype="podcast"\nurl="x"', "is not one of arxiv, arxiv-rss, feed"),
        ('[[sources]]\nname="a"\ntype="feed"\nurl="x"\ncolour="red"', "unknown key(s) colour"),
        (  # a key no source type takes is refused, named with this type's own keys
            '[[sources]]\nname="a"\ntype="arxiv-rss"\ncategories=["cs.LG"]\npage_size=10\npage_sise=10',
            "unknown key(s) page_sise in radar.toml [[sources]] 'a' (type arxiv-rss); valid keys: base_url, "
            "categories, enabled, min_interval_s, name, type",
        ),
        ('[[sources]]\nname="a"\ntype=1\nurl="x"', "'a': type must be a string, not 1"),
        ('[[sources]]\nname="a"\ntype="feed"\nurl="x"\n[[sources]]\nname="a"\ntype="feed"\nurl="y"', "rename a"),
        ("[crawl]\nmax_retries = 1000", "retries are bounded"),
        ('[[sources]]\nname="a"\nurl="x"', "'a': missing type; add type = "),
        ('[[sources]]\nname="a\\nb"\nurl="x"', "'a\\nb': missing type"),
        ("this is = not [toml", "not valid TOML"),
    ],
)
def test_bad_config_says_how_to_fix(toml: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        crawler_config(parse_config(toml))


def test_a_key_of_another_source_type_is_ignored_with_one_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A radar.toml the single source table accepted still loads: an arxiv-rss source keeping page_size, queries
    and initial_days from its arxiv days (and a feed keeping page_size) reads as without them, and one line per
    source on stderr names the source, the keys and the valid keys; nothing else changes."""
    from radar.app.context import Radar
    from radar.store import Workspace

    switched = (
        '[[sources]]\nname="rss"\ntype="arxiv-rss"\nbase_url="https://rss.arxiv.org/atom/"\ncategories=["cs.LG"]\n'
        'page_size=500\nqueries=["grpo"]\n'
        'initial_days=3\n[[sources]]\nname="blog"\ntype="feed"\nurl="https://example.org/feed"\npage_size=10\n'
    )
    plain = (
        '[[sources]]\nname="rss"\ntype="arxiv-rss"\nbase_url="https://rss.arxiv.org/atom/"\ncategories=["cs.LG"]\n'
        '[[sources]]\nname="blog"\ntype="feed"\n'
    )
    config = crawler_config(parse_config(switched))
    assert config.sources == crawler_config(parse_config(plain + 'url="https://example.org/feed"\n')).sources
    assert config.notes == (
        "radar.toml [[sources]] 'rss' (type arxiv-rss): ignoring initial_days, page_size, queries (another source "
        "type's key(s)); valid keys: base_url, categories, enabled, min_interval_s, name, type; remove them from "
        "radar.toml",
        "radar.toml [[sources]] 'blog' (type feed): ignoring page_size (another source type's key(s)); valid keys: "
        "enabled, min_interval_s, name, type, url; remove it from radar.toml",
    )
    assert crawler_config(parse_config(DEFAULT_CONFIG_TEXT)).notes == ()

    ws, _ = Workspace.init(tmp_path / "ws")
    ws.config_path.write_text(switched)
    capsys.readouterr()
    assert [s.name for s in Radar.at(ws.root).settings.sources] == ["rss", "blog"]
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith("radar: note: ") for line in err)
    assert "'rss' (type arxiv-rss): ignoring initial_days, page_size, queries" in err[0]
    assert "valid keys: base_url, categories, enabled, min_interval_s, name, type" in err[0]


def test_sources_are_one_union_keyed_by_type() -> None:
    """Each [[sources]] table decodes to its type's struct, and encodes back to the table it came from."""
    config = crawler_config(parse_config(DEFAULT_CONFIG_TEXT))
    assert [type(s) for s in config.sources] == [ArxivSource, ArxivRssSource, FeedSource, FeedSource]
    for src, table in zip(config.sources, parse_config(DEFAULT_CONFIG_TEXT).source_tables, strict=True):
        encoded = msgspec.json.decode(msgspec.json.encode(src))
        assert {k: v for k, v in encoded.items() if k in table} == table and encoded["type"] == table["type"]
        assert msgspec.convert(encoded, Source) == src


def test_unknown_source_lists_valid_names() -> None:
    with pytest.raises(ConfigError, match="configured sources: arxiv, arxiv-rss"):
        crawler_config(parse_config(DEFAULT_CONFIG_TEXT)).source("nope")


def test_misspelt_section_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"unknown section\(s\) \[embeding\]; valid: .*\[embedding\]"):
        parse_config("[embeding]\nmodel = 'x'\n")


def test_repro_settings_are_typed_and_refuse_unknown_keys(tmp_path: Path) -> None:
    from radar.app.context import Radar
    from radar.app.settings import ReproConfig
    from radar.store import Workspace
    from radar.store.errors import ConfigError

    ws, _ = Workspace.init(tmp_path / "ws")
    assert Radar.at(ws.root).settings.repro == ReproConfig()  # the default radar.toml: nothing queued weekly
    base = ws.config_path.read_text()
    ws.config_path.write_text(
        base + '\n[repro]\nweekly_runs = 2\ndevice = "cpu"\nseeds = 3\ntask = "sorting"\ndataset = "data/gsm8k.jsonl"\n'
        'model = "Qwen/Qwen2.5-0.5B-Instruct"\nsteps = 40\n\n[[repro.presets]]\nname = "dapo-eps03"\nbase = "dapo"\n'
        "settings = { epsilon_high = 0.3 }\n"
    )
    cfg = Radar.at(ws.root).settings.repro
    assert (cfg.weekly_runs, cfg.device, cfg.seeds, cfg.task, cfg.steps) == (2, "cpu", 3, "sorting", 40)
    assert cfg.dataset == str(ws.root / "data" / "gsm8k.jsonl") and cfg.model == "Qwen/Qwen2.5-0.5B-Instruct"
    assert cfg.presets[0]["name"] == "dapo-eps03" and cfg.run_queued
    for bad, needle in (
        ("[repro]\nweekly = 1\n", "unknown key(s) weekly in [repro]; valid keys: dataset, device"),
        ("[repro]\nseeds = 0\n", "seeds must be between 1 and 20"),
        ('[repro]\ndevice = "tpu"\n', "device must be auto, cpu or cuda"),
        ('[repro]\ntask = "chess"\n', "task 'chess' is not one of addition"),
        ('[[repro.presets]]\nname = "x"\nbase = "dapo"\nsettings = { lr = 1 }\n', "unknown setting(s) lr"),
    ):
        ws.config_path.write_text(base + "\n" + bad)
        with pytest.raises(ConfigError) as err:
            Radar.at(ws.root).settings  # noqa: B018
        assert needle in str(err.value) and "\n" not in str(err.value)
