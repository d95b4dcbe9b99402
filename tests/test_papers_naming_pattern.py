"""The phrases' pattern (``extract.any_phrase``) only skips texts that hold none of the phrases: a week's multi-word
names are found in the same papers, with the same comparisons, as by the scan of every text's runs."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from radar.analysis.contributions import extract
from radar.analysis.contributions.cards import mentions_for
from radar.analysis.contributions.extract import any_phrase, papers_naming
from radar.analysis.contributions.table import Contributions, PaperText
from radar.analysis.contributions.update import name_key
from radar.crawler.documents import Document, Documents
from radar.store import Workspace

# names of several words, as cards carry them: hyphens, digits, dots, a parenthesis, one that starts another
NAMES = [
    "Dr. GRPO",
    "Tree-GRPO Search",
    "Qwen2.5 Math",
    "PromptCoT 2.0",
    "Method Number7",
    "Fuzzy Reasoning Chain (FRC)",
    "Vision Transformers",
    "Vision Transformers at Scale",
]
TEXTS = {  # id -> (title, abstract)
    "2507.00001": ("Dr. GRPO, revisited", "We compare with DAPO and outperform Tree-GRPO Search."),
    "2507.00002": ("A study", "Unlike prior work (Dr.\nGRPO), we tune Qwen2.5\n  Math on PromptCoT\t2.0 data."),
    "2507.00003": ("Numbers", "Method Number70 is not Method Number7; Vision\u00a0Transformers at\u2028Scale beat it."),
    "2507.00004": ("Not it", "Our XDr. GRPO variant, sub-Tree-GRPO Search and Qwen2.5 Mathematics differ."),
    "2507.00005": ("Marked up", "On \\textsc{Dr. GRPO}, $\\mathrm{Qwen2.5}$ Math, ((Fuzzy Reasoning Chain (FRC)))."),
    "2507.00006": ("Plain", "Nothing of the kind is named here: vision transformers, dr. grpo."),
    "2507.00007": ("Fuzzy Reasoning Chain (FRC): a title", "Baselines: GRPO,Dr. GRPO and PPO/Tree-GRPO Search."),
}  # fmt: skip


def _scan_all(papers: list[PaperText], phrases: list[str]) -> dict[str, list[PaperText]]:
    """``papers_naming`` with no pattern: every text's runs looked up."""
    with mock.patch.object(extract, "MAX_PATTERN", 0):
        return papers_naming(papers, phrases)


def test_week_mentions_are_those_of_the_full_scan(tmp_path: Path) -> None:
    ws, _ = Workspace.init(tmp_path / "ws")
    with ws.store() as store:
        Documents(store).upsert(
            Document(id=i, kind="paper", source="test", title=t, abstract=a, published="2025-07-15T00:00:00Z")
            for i, (t, a) in TEXTS.items()
        )
        names = [(n, "2025-07-01") for n in NAMES]
        fast = mentions_for(Contributions(store), names)
        with mock.patch.object(extract, "MAX_PATTERN", 0):
            scanned = mentions_for(Contributions(store), names)
        papers = list(Contributions(store).papers_since("2025-07-01"))
    assert fast == scanned
    assert papers_naming(papers, NAMES) == _scan_all(papers, NAMES)
    found = {n: [m.doc_id for m in fast.get(name_key(n), [])] for n in NAMES}
    assert found["Dr. GRPO"] == ["2507.00001", "2507.00002", "2507.00005", "2507.00007"]
    assert found["Qwen2.5 Math"] == ["2507.00002"]  # across a line break; not "Qwen2.5 Mathematics"
    assert found["PromptCoT 2.0"] == ["2507.00002"]
    assert found["Tree-GRPO Search"] == ["2507.00001", "2507.00007"]  # not "sub-Tree-GRPO Search"
    assert found["Method Number7"] == ["2507.00003"]
    assert found["Vision Transformers at Scale"] == ["2507.00003"]  # no-break and line-separator spaces
    assert found["Fuzzy Reasoning Chain (FRC)"] == ["2507.00005", "2507.00007"]


_CHARS = st.sampled_from(list("abAB12-._/( )\n\t\u00a0\u2028$\\{}xX×"))


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(st.text(_CHARS, max_size=30), min_size=1, max_size=6),
    phrases=st.lists(st.text(_CHARS, min_size=1, max_size=8), min_size=1, max_size=5),
)
def test_the_pattern_skips_no_text_holding_a_phrase(texts: list[str], phrases: list[str]) -> None:
    papers = [PaperText(f"p{i}", t, texts[-1 - i], "2025-07-01") for i, t in enumerate(texts)]
    assert papers_naming(papers, phrases) == _scan_all(papers, phrases)


def test_white_space_the_pattern_matches_is_what_split_collapses() -> None:
    """Each space of a phrase stands for ``\\s+``: every character ``str.split()`` splits on is one ``\\s`` matches."""
    spaces = [c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()]
    assert all(len(f"a{c}b".split()) == 2 for c in spaces)
    assert [c for c in spaces if not re.fullmatch(r"\s", c)] == []
    assert any_phrase(["Dr. GRPO"]).search("(Dr.\r\n\u3000GRPO)")
