"""Boundary features (analysis/tags/boundaries.py): what they count, which tags see them, and the taxonomy that
states the boundaries."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from radar.analysis.tags.boundaries import BOUNDARIES, boundary_matrix
from radar.analysis.tags.config import TaggingConfig
from radar.analysis.tags.errors import TaggingError
from radar.analysis.tags.tagger import Corpus, fit_model
from radar.analysis.tags.taxonomy import DEFAULT_TAXONOMY, load_taxonomy_file, parse_taxonomy
from radar.analysis.tags.training import Examples, shipped_papers

TAXONOMY = load_taxonomy_file(DEFAULT_TAXONOMY)
SHARED_TAXONOMY = Path(__file__).resolve().parents[2] / "shared" / "labels" / "TAXONOMY.md"


def features(boundary: str, title: str, abstract: str) -> dict[str, float]:
    row = boundary_matrix([boundary], [title], [abstract])[0]
    return dict(zip(BOUNDARIES[boundary].columns, np.expm1(row).round().tolist(), strict=True))


def test_language_model_training_tells_llm_rl_from_classical_rl() -> None:
    llm = features(
        "language-model-training",
        "Tool use for agents",
        "Agents need tools. We train a vision-language model with GRPO to call tools. It works.",
    )
    assert llm["lm-trained"] >= 1 and llm["rl-own-with-lm"] >= 1 and llm["rl-without-lm"] == 0
    uav = features(
        "language-model-training",
        "Energy-efficient UAV swarms",
        "We formulate trajectory control as an MDP and propose a multi-agent PPO algorithm for UAV swarms.",
    )
    assert uav["lm-trained"] == 0 and uav["rl-without-lm"] >= 1 and uav["rl-classical-domain"] >= 1


def test_hardware_proposed_tells_a_design_from_hardware_that_is_only_used() -> None:
    design = features(
        "hardware-proposed",
        "An accelerator for video diffusion",
        "We design a systolic accelerator in 28 nm CMOS; it takes 2.1 mm2 of silicon area.",
    )
    assert design["hardware-proposed"] >= 1 and design["hardware-only-used"] == 0
    used = features(
        "hardware-proposed",
        "Pruning spiking networks",
        "Spiking networks are pruned. Latency is measured on a Jetson Orin and a Raspberry Pi, whose GPUs idle.",
    )
    assert used["hardware-proposed"] == 0 and used["hardware-only-used"] >= 1


def test_judge_contribution_counts_a_proposed_judge_not_one_that_is_used() -> None:
    own = features(
        "judge-contribution", "Rubric judges for agents", "We propose a rubric-based judge that scores outputs."
    )
    used = features("judge-contribution", "Math agents", "Prior work relies on an LLM judge. Scores improve.")
    assert own["judge-contributed"] >= 1 and used["judge-contributed"] == 0 and used["judge-background"] >= 1


def test_unknown_boundary_in_a_taxonomy_is_one_line_naming_the_valid_ones() -> None:
    with pytest.raises(TaggingError, match="boundaries is a list of names from language-model-training"):
        parse_taxonomy("[[tag]]\nname = 'a'\nkeywords = ['x']\nboundaries = ['lm-is-trained']\n", "t.toml")


def test_only_the_tags_that_name_a_boundary_learn_weights_for_it() -> None:
    """rl-policy-optimization names language-model-training: its text regression has weights on those columns;
    preference-optimization names none: its weights there are exactly 0 (no other tag's feature leaks in)."""
    papers = shipped_papers()
    ids = sorted(papers)[:200]
    rng = np.random.default_rng(1)
    y = rng.random((len(ids), len(TAXONOMY.names))) < 0.3
    examples = Examples(
        ids,
        [papers[i][0] for i in ids],
        [papers[i][1] for i in ids],
        rng.normal(size=(len(ids), 8)).astype(np.float32),
        y,
        np.ones_like(y),
        np.ones(y.shape, dtype=np.float32),
        np.zeros(len(ids), dtype=bool),
    )
    model = fit_model(examples, TAXONOMY, TaggingConfig(), Corpus(), lambda t: np.ones((len(t), 8), np.float32))
    space = model.space
    assert space.boundaries == ("language-model-training", "hardware-proposed")
    width = sum(len(BOUNDARIES[b].columns) for b in space.boundaries)
    lm = len(BOUNDARIES["language-model-training"].columns)

    def boundary_weights(tag: str) -> np.ndarray:
        rule = model.rules[tag]
        assert rule.classifier is not None
        return rule.classifier.text.coef[-width:]

    rl, hw, pref = (
        boundary_weights(t) for t in ("rl-policy-optimization", "accelerator-hardware", "preference-optimization")
    )
    assert np.any(rl[:lm] != 0) and np.all(rl[lm:] == 0)
    assert np.any(hw[lm:] != 0) and np.all(hw[:lm] == 0)
    assert np.all(pref == 0)


def _words(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


@pytest.mark.skipif(not SHARED_TAXONOMY.is_file(), reason="the shared labelling guide is beside the checkout in CI")
def test_the_default_taxonomy_states_the_labelling_guides_boundaries() -> None:
    """Each boundary sentence the guide added (after the held-out audit) is in the packaged tag's description."""
    guide = _words(SHARED_TAXONOMY.read_text())
    for tag, sentence in (
        (
            "rl-policy-optimization",
            "A paper counts when online RL training of a language model is a main stage of its method",
        ),
        ("rl-policy-optimization", "but not when RL is only an optional extra"),
        ("reward-modeling", "A judge, verifier or reward design counts when it is a main contribution"),
        ("reward-modeling", "nor an LLM annotating attributes other than output quality"),
        (
            "accelerator-hardware",
            "Chip and circuit design, including ML/LLM-driven EDA, counts even when the chip is not an AI accelerator",
        ),
        (
            "accelerator-hardware",
            "Software that only runs on, is tuned for, or is profiled on existing hardware does not count",
        ),
    ):
        assert _words(sentence) in guide, "the shared guide changed: update this test and taxonomy.toml"
        assert _words(sentence) in _words(TAXONOMY.get(tag).description), (tag, sentence)
