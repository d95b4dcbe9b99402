from __future__ import annotations

import pytest

from radar.store import ConfigError, parse_config
from radar.store.config import DEFAULT_CONFIG_TEXT


def test_default_config_parses_with_arxiv_politeness() -> None:
    config = parse_config(DEFAULT_CONFIG_TEXT)
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
        ('[[sources]]\nname="a"\ntype="feed"\nurl="x"\n[[sources]]\nname="a"\ntype="feed"\nurl="y"', "rename a"),
        ("[crawl]\nmax_retries = 1000", "retries are bounded"),
        ("this is = not [toml", "not valid TOML"),
    ],
)
def test_bad_config_says_how_to_fix(toml: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_config(toml)


def test_unknown_source_lists_valid_names() -> None:
    with pytest.raises(ConfigError, match="configured sources: arxiv, arxiv-rss"):
        parse_config(DEFAULT_CONFIG_TEXT).source("nope")


def test_misspelt_section_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"unknown section\(s\) \[embeding\]; valid: .*\[embedding\]"):
        parse_config("[embeding]\nmodel = 'x'\n")
