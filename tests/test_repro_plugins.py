"""Every plug-in against a hand-worked example of its paper's formula on small tensors, and the plug-in catalog.

The expected numbers are worked out by hand in the comments (not by calling another implementation), so a changed
formula (a mean for a quantile, an interpolated quantile, population for sample std, a clip that cuts gradients)
fails here. Where a method is about gradients (PSPO, CE-GPPO, GPG), the gradient is checked too.
"""

from __future__ import annotations

import math
from importlib import metadata

import pytest
import torch

from radar.repro.errors import ReproError
from radar.repro.plugins import BUILTIN_CATALOG, BUILTIN_PLUGINS, ENTRY_POINT_GROUP, Plugin, build_catalog
from radar.repro.plugins import advantage as adv
from radar.repro.plugins import batch as bat
from radar.repro.plugins import loss as los
from radar.repro.plugins.points import AdvantageInputs, BatchInputs, LossInputs, aggregate

T = torch.tensor


def _adv(
    rewards: list[float],
    group: int,
    correct: list[float] | None = None,
    lengths: list[float] | None = None,
    **args: float,
) -> AdvantageInputs:  # noqa: E501
    n = len(rewards)
    return AdvantageInputs(
        T([float(r) for r in rewards]),
        T(correct if correct is not None else [float(r >= 1) for r in rewards]),
        T(lengths or [1.0] * n),
        group,
        args,
    )


def _loss(
    logps: list[list[float]],
    old: list[list[float]],
    advantages: list[list[float]],
    mask: list[list[float]] | None = None,
    **kw: object,
) -> LossInputs:  # noqa: E501
    lp = T(logps, requires_grad=True)
    m = T(mask) if mask is not None else torch.ones_like(lp)
    rows = lp.shape[0]
    base = {
        "entropies": torch.zeros_like(lp),
        "correct": torch.zeros(rows),
        "group_correct": torch.full((rows,), 0.5),
        "epsilon_low": 0.2,
        "epsilon_high": 0.2,
        "aggregation": "token-mean",
        "max_length": lp.shape[1],
        "args": {},
    } | kw
    return LossInputs(logps=lp, old_logps=T(old), advantages=T(advantages), mask=m, **base)  # type: ignore[arg-type]


def approx(x: torch.Tensor, expected: list[float], tol: float = 1e-4) -> None:
    assert x.detach().flatten().tolist() == pytest.approx(expected, abs=tol)


# -- advantage -------------------------------------------------------------------------------------------------
def test_qae_quantile_baseline_eq3() -> None:
    """K = 0.4, G = 4: b_K is the ceil(0.4 * 4) = 2nd smallest reward. Group [0,0,1,1]: b = 0, sample std
    sqrt(1/3) = 0.57735, A = [0, 0, 1.73205, 1.73205]. Group [1,1,1,0]: sorted [0,1,1,1], b = 1, std 0.5,
    A = [0, 0, 0, -2]. (Mean baseline: [-0.866, -0.866, 0.866, 0.866]; torch.quantile's interpolation: b = 0.2.)"""
    out = adv.qae(_adv([0, 0, 1, 1, 1, 1, 1, 0], 4, k=0.4))
    approx(out.advantages, [0, 0, 1.73205, 1.73205, 0, 0, 0, -2.0])
    assert out.rates["zero_adv_share"] == pytest.approx(5 / 8)
    # Eq. 4: for binary rewards b = 0 when p <= 1 - K; p = 0.5 <= 0.6 and p = 0.75 > 0.6 above. K = 0.7 moves the
    # first group's baseline to 1 (ceil(2.8) = 3rd smallest): A = [-1.732, -1.732, 0, 0].
    approx(adv.qae(_adv([0, 0, 1, 1], 4, k=0.7)).advantages, [-1.73205, -1.73205, 0, 0])
    with pytest.raises(ValueError, match="must be in"):
        adv.qae(_adv([0, 1], 2, k=1.5))


def test_ngrpo_virtual_maximum() -> None:
    """All-wrong group [0,0,0,0] with the virtual 1.1: mean 0.22, sample std over 5 = sqrt(0.968 / 4) = 0.49193,
    A = -0.22 / 0.49193 = -0.44721 each (GRPO gives 0)."""
    out = adv.ngrpo(_adv([0, 0, 0, 0], 4, max_reward=1.1))
    approx(out.advantages, [-0.44721] * 4)
    assert out.rates["all_wrong_signal"] == 1.0
    # [1.1, 0, 0, 0] + 1.1: mean 0.44, sq dev 2*0.4356 + 3*0.1936 = 1.452, std sqrt(0.363) = 0.60249;
    # A = [0.66/0.60249, -0.44/0.60249 x3] = [1.09546, -0.73030 x3]
    approx(adv.ngrpo(_adv([1.1, 0, 0, 0], 4, max_reward=1.1)).advantages, [1.09546, -0.73030, -0.73030, -0.73030])


def test_opo_length_weighted_baseline() -> None:
    """Rewards [1, 0], lengths [2, 6]: b* = (2*1 + 6*0) / 8 = 0.25, A = [0.75, -0.25] (the mean would give +-0.5)."""
    out = adv.opo(_adv([1, 0], 2, lengths=[2, 6]))
    approx(out.advantages, [0.75, -0.25])
    assert out.rates["baseline_shift"] == pytest.approx(0.25)


def test_gpg_alpha_corrects_for_zero_variance_groups() -> None:
    """B = 8, group 2 all equal: M = 4, alpha = 8 / 4 = 2; group 1 [1,0,0,0] - 0.25 = [0.75, -0.25 x3] x 2."""
    out = adv.gpg(_adv([1, 0, 0, 0, 0, 0, 0, 0], 4))
    approx(out.advantages, [1.5, -0.5, -0.5, -0.5, 0, 0, 0, 0])
    assert out.rates["gpg_alpha"] == 2.0


def test_reinforce_pp_whitens_over_the_batch_tokens() -> None:
    """Rewards [1, 0] on 1 and 3 tokens: token mean (1 + 0) / 4 = 0.25, token variance (0.5625 + 3 * 0.0625) / 4
    = 0.1875, x 4/3 (Bessel over tokens) = 0.25, std 0.5: A = [0.75 / 0.5, -0.25 / 0.5] = [1.5, -0.5]."""
    approx(adv.reinforce_pp(_adv([1, 0], 2, lengths=[1, 3])).advantages, [1.5, -0.5])
    # an all-wrong group still trains (no group baseline): groups [1, 0], [0, 0], one token each: token mean 0.25,
    # variance (0.5625 + 3 * 0.0625) / 4 x 4/3 = 0.25: A = [1.5, -0.5, -0.5, -0.5]; 2 of 4 rows in the flat group
    out = adv.reinforce_pp(_adv([1, 0, 0, 0], 2))
    approx(out.advantages, [1.5, -0.5, -0.5, -0.5])
    assert out.rates["zero_var_signal"] == 0.5


def test_reinforce_pp_baseline_subtracts_the_group_mean_first() -> None:
    """Groups [1,0], [1,1] (1 token each): centred [0.5, -0.5, 0, 0], mean 0, variance 0.5 / 4 x 4/3 = 1/6,
    std 0.408248: A = [1.224745, -1.224745, 0, 0]."""
    approx(adv.reinforce_pp_baseline(_adv([1, 0, 1, 1], 2)).advantages, [1.224745, -1.224745, 0, 0])


def test_passk_analytic_advantage_eqs_14_15() -> None:
    """G = 4, k = 2. One right: R = 1 - C(3,2)/C(4,2) = 0.5, sigma 0.5, A+ = 1, A- = (0.5 - C(2,1)/C(3,1)) / 0.5
    = -1/3. Two right: R = 1 - 1/6, sigma = sqrt(5)/6 = 0.372678, A+ = (1/6)/sigma = 0.447214, A- = (1/6 - 1/3)/sigma
    = -0.447214. Three right: R = 1 (C(1,2) = 0), sigma 0: all 0."""
    c = [1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 0]
    out = adv.passk(_adv([float(x) for x in c], 4, correct=[float(x) for x in c], k=2))
    approx(out.advantages, [1, -1 / 3, -1 / 3, -1 / 3, 0.447214, 0.447214, -0.447214, -0.447214, 0, 0, 0, 0])
    assert out.rates["passk_saturated"] == pytest.approx(4 / 12)  # the three-right group passes@2 for sure
    # k = 1 is pass@1: GRPO's z-score with population std, sqrt(p(1-p)): one right of 4: A+ = 0.75/0.4330 = 1.7320
    approx(adv.passk(_adv([1, 0, 0, 0], 4, k=1)).advantages, [1.73205, -0.57735, -0.57735, -0.57735])


# -- batch -------------------------------------------------------------------------------------------------------
def test_vcrl_normalised_variance_and_kappa_schedule() -> None:
    """G = 4: k right -> p = k (4 - k) / 4. k = 2: 1; k = 1: 0.75; k = 0: 0. kappa 0.3 before step 20, 0.8 after."""
    right = [1.0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]
    early = bat.vcrl(BatchInputs(T(right), T(right), 4, 3, {"kappa_early": 0.3, "kappa": 0.8, "switch_step": 20}))
    assert early.keep.tolist() == [True, True, False]
    late = bat.vcrl(BatchInputs(T(right), T(right), 4, 25, {"kappa_early": 0.3, "kappa": 0.8, "switch_step": 20}))
    assert late.keep.tolist() == [True, False, False] and late.rates["vcrl_dropped"] == pytest.approx(2 / 3)
    assert bat.dapo_filter(BatchInputs(T(right), T(right), 4, 0, {})).keep.tolist() == [True, True, False]


# -- ratio/loss --------------------------------------------------------------------------------------------------
def test_pspo_smoothed_ratio_value_and_gradient() -> None:
    """r = 2 (log-ratio ln 2), A = 1, alpha 0.1: r~ = 0.9 * 2 + 0.1 = 1.9, loss -1.9; d loss / d log pi = -0.9 r A
    = -1.8 (a clip would give 0: r > 1.2 with A > 0)."""
    x = _loss([[math.log(2.0)]], [[0.0]], [[1.0]], args={"alpha": 0.1})
    out = los.pspo(x)
    approx(out.per_token, [-1.9])
    out.per_token.sum().backward()
    approx(x.logps.grad, [-1.8])  # type: ignore[arg-type]
    assert out.rates["outside_clip"] == 1.0


def test_rl_zvp_entropy_shaped_advantages_eq5() -> None:
    """alpha 0.1, entropies [0.5, 1.0], ratio 1. All-right group: A = alpha H = [0.05, 0.1], loss = -A. All-wrong:
    A = -alpha (max H - H) = [-0.05, 0], loss [0.05, 0]. A mixed group keeps its advantage 2: loss -2 per token."""
    zero = [[0.0, 0.0]] * 3
    x = _loss(
        zero,
        zero,
        [[0.0, 0.0], [0.0, 0.0], [2.0, 2.0]],
        entropies=T([[0.5, 1.0]] * 3),
        correct=T([1.0, 0.0, 1.0]),
        group_correct=T([1.0, 0.0, 0.5]),
        args={"alpha": 0.1},
    )
    out = los.rl_zvp(x)
    approx(out.per_token, [-0.05, -0.1, 0.05, 0.0, -2.0, -2.0])
    assert out.rates["zvp_trained"] == pytest.approx(2 / 3)


def test_clip_cov_detaches_the_high_covariance_token() -> None:
    """A = [3, -1, -2] (mean 0), log pi = [0, -2, -1] (mean -1): Cov = [3, 1, 0]; only token 0 lies in (1, 5)
    (strict), one token (max(int(2e-4 * 3), 1)) is detached: loss -A r = [-3, 1, 2] -> [0, 1, 2]."""
    lp = [[0.0, -2.0, -1.0]]
    x = _loss(lp, lp, [[3.0, -1.0, -2.0]], args={"ratio": 2e-4, "lb": 1.0, "ub": 5.0})
    out = los.clip_cov(x)
    approx(out.per_token, [0.0, 1.0, 2.0])
    assert out.rates["cov_detached"] == pytest.approx(1 / 3)


def test_kl_cov_penalises_the_top_covariance_token() -> None:
    """As above with log r = 0.2 (r = e^0.2 = 1.221403): the top token by Cov (token 0) gets + |log r| = 0.2:
    loss [-3 * 1.221403 + 0.2, 1.221403, 2 * 1.221403] = [-3.464208, 1.221403, 2.442806]."""
    lp = [[0.0, -2.0, -1.0]]
    x = _loss(lp, [[-0.2, -2.2, -1.2]], [[3.0, -1.0, -2.0]], args={"ratio": 2e-4, "coef": 1.0})
    out = los.kl_cov(x)
    approx(out.per_token, [-3.464208, 1.221403, 2.442806])


def test_gpg_loss_is_the_plain_policy_gradient() -> None:
    """-A log pi with A = 2, pi = 0.5: 2 ln 2 = 1.386294; gradient -A = -2 whatever the ratio (no clip)."""
    x = _loss([[math.log(0.5)]], [[math.log(0.1)]], [[2.0]])
    out = los.gpg(x)
    approx(out.per_token, [1.386294])
    out.per_token.sum().backward()
    approx(x.logps.grad, [-2.0])  # type: ignore[arg-type]


def test_ce_gppo_keeps_bounded_gradients_of_clipped_tokens() -> None:
    """eps 0.2, beta1 0.75, beta2 1. Token a: A = 1, r = 1.5 > 1.2: value -beta2 (1.2) r / sg(r) A = -1.2, gradient
    -1.2 (PPO: 0). Token b: A = -1, r = 0.5 < 0.8: value -0.75 * 0.8 * (-1) = 0.6 (under the dual clip 3), gradient
    0.6. Token c: A = -1, r = 1: -r A = 1, gradient 1."""
    x = _loss(
        [[math.log(1.5), math.log(0.5), 0.0]],
        [[0.0, 0.0, 0.0]],
        [[1.0, -1.0, -1.0]],
        args={"beta1": 0.75, "beta2": 1.0, "dual_clip": 3.0},
    )
    out = los.ce_gppo(x)
    approx(out.per_token, [-1.2, 0.6, 1.0])
    out.per_token.sum().backward()
    approx(x.logps.grad, [-1.2, 0.6, 1.0])  # type: ignore[arg-type]
    assert out.rates["gradient_kept"] == pytest.approx(2 / 3)


def test_dcpo_dynamic_bounds_from_the_old_probability() -> None:
    """eps_low 0.16, eps_high 0.2. q = 0.9: upper bound 0.5 + 0.5 sqrt(1 + 0.8/0.9) = 1.187184, so r = 1.3 (A = 1) is
    clipped: loss -1.187184. q = 0.01: upper bound 0.5 + 0.5 sqrt(81) = 5, r = 3 is not: loss -3. OTM: summed over
    the response's tokens (-4.187184), averaged over responses."""
    x = _loss(
        [[math.log(0.9 * 1.3), math.log(0.03)]],
        [[math.log(0.9), math.log(0.01)]],
        [[1.0, 1.0]],
        args={"eps_low": 0.16, "eps_high": 0.2},
    )
    out = los.dcpo(x)
    approx(out.per_token, [-1.187184, -3.0])
    assert out.aggregation == "seq-mean-token-sum"
    assert aggregate(out.per_token, x.mask, out.aggregation).item() == pytest.approx(-4.187184, abs=1e-4)
    # the lower bound: q = 0.9 -> 0.5 + 0.5 sqrt(1 - 0.64/0.9) = 0.768742; r = 0.5 with A = -1: loss 0.768742
    y = _loss([[math.log(0.45)]], [[math.log(0.9)]], [[-1.0]], args={"eps_low": 0.16, "eps_high": 0.2})
    approx(los.dcpo(y).per_token, [0.768742])


def test_delta_l_weights_responses_by_length() -> None:
    """alpha 1, lengths 1 and 4: L^-1 = [1, 0.25], mean 0.625, w = [1.6, 0.4]; ratio 1, A = 1: per-token -w;
    all-mean: (-1.6 - 4 * 0.4) / (2 rows x 4 tokens) = -0.4."""
    zero = [[0.0] * 4] * 2
    x = _loss(zero, zero, [[1.0] * 4] * 2, mask=[[1, 0, 0, 0], [1, 1, 1, 1]], args={"alpha": 1.0})
    out = los.delta_l(x)
    assert aggregate(out.per_token, x.mask, out.aggregation).item() == pytest.approx(-0.4)
    assert out.rates["length_weight_spread"] == pytest.approx(4.0)


def test_gmpo_geometric_mean_of_log_clipped_ratios() -> None:
    """eps 0.4: ratios e^1 on both tokens; A = 1 takes min(1, clip 0.4) -> s = e^0.4, A = -1 keeps e^1 (pessimistic):
    loss per response -A s, mean over the two: (e^1 - e^0.4) / 2 = (2.718282 - 1.491825) / 2 = 0.613228."""
    x = _loss(
        [[1.0, 1.0], [1.0, 1.0]],
        [[0.0, 0.0], [0.0, 0.0]],
        [[1.0, 1.0], [-1.0, -1.0]],
        epsilon_low=0.4,
        epsilon_high=0.4,
    )
    out = los.gmpo(x)
    assert aggregate(out.per_token, x.mask, out.aggregation).item() == pytest.approx(0.613228, abs=1e-5)
    assert out.rates["clip_region"] == 0.5


def test_aggregations_as_verl_names_them() -> None:
    """Per-token losses [[1, 2, pad], [3, pad, pad]]: token-mean 6/3 = 2; seq-mean-token-mean (1.5 + 3)/2 = 2.25;
    seq-mean-token-sum (3 + 3)/2 = 3; ..-norm / 3 tokens = 1; all-mean 6 / 6 = 1."""
    loss, mask = T([[1.0, 2.0, 9.0], [3.0, 9.0, 9.0]]), T([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    got = {
        m: aggregate(loss, mask, m, 3).item()
        for m in ("token-mean", "seq-mean-token-mean", "seq-mean-token-sum", "seq-mean-token-sum-norm", "all-mean")
    }
    assert got == pytest.approx(
        {
            "token-mean": 2.0,
            "seq-mean-token-mean": 2.25,
            "seq-mean-token-sum": 3.0,
            "seq-mean-token-sum-norm": 1.0,
            "all-mean": 1.0,
        }
    )
    with pytest.raises(ValueError, match="unknown loss aggregation"):
        aggregate(loss, mask, "sum-of-squares")


# -- the catalog ---------------------------------------------------------------------------------------------------
THIRD = Plugin(
    "half_baseline",
    "advantage",
    "tests.test_repro_plugins:half_baseline",
    "r - mean / 2 (a test plug-in)",
    args={"scale": 0.5},
    rates={"touched": "rows"},
)


def half_baseline(x: AdvantageInputs) -> adv.AdvantageResult:
    r = x.rewards.view(-1, x.group)
    return adv.AdvantageResult((r - x.args["scale"] * r.mean(dim=1, keepdim=True)).reshape(-1), {"touched": 1.0})


def test_every_builtin_plugin_imports_and_every_rate_and_setting_is_declared() -> None:
    for p in BUILTIN_PLUGINS:
        assert callable(p.function()), p.name
        assert p.arxiv and p.equation and p.summary, p.name
        assert p.verl or p.no_verl, p.name  # the verl export either registers it or says why not
    assert len({(p.point, p.name) for p in BUILTIN_PLUGINS}) == len(BUILTIN_PLUGINS)


def test_unknown_plugins_and_settings_are_refused_in_one_line() -> None:
    with pytest.raises(ReproError) as err:
        BUILTIN_CATALOG.get("advantage", "qea")
    msg = str(err.value)
    assert "unknown advantage plug-in 'qea'; registered: gpg, ngrpo, opo, passk, qae" in msg and "\n" not in msg
    with pytest.raises(ReproError, match="has no setting kk; valid: k"):
        BUILTIN_CATALOG.get("advantage", "qae").settings({"kk": 0.5})
    with pytest.raises(ReproError, match="unknown plug-in point 'reward'"):
        BUILTIN_CATALOG.get("reward", "qae")
    with pytest.raises(ReproError, match="point 'rewards' is not one of advantage, ratio/loss, batch"):
        Plugin("x", "rewards", "a.b:c", "")


def test_entry_points_join_the_builtins_and_broken_ones_are_reported() -> None:
    """An entry point's object (a Plugin) joins the catalog; one that fails to import, or takes a built-in's name,
    is left out with one line naming the package (the built-ins still work)."""
    good = metadata.EntryPoint("half", "tests.test_repro_plugins:THIRD", ENTRY_POINT_GROUP)
    broken = metadata.EntryPoint("broken", "tests.no_such_module:PLUGIN", ENTRY_POINT_GROUP)
    clash = metadata.EntryPoint("clash", "radar.repro.plugins.catalog:BUILTIN_PLUGINS", ENTRY_POINT_GROUP)
    cat = build_catalog(BUILTIN_PLUGINS, [good, broken, clash])
    assert cat.get("advantage", "half_baseline") is THIRD and cat.source("advantage", "qae") == "built-in"
    assert "entry point" in cat.source("advantage", "half_baseline")
    assert len(cat.problems) == 1 + len(BUILTIN_PLUGINS)
    assert "'broken'" in cat.problems[0] and "ModuleNotFoundError" in cat.problems[0]
    assert all("\n" not in p for p in cat.problems) and "already registered" in cat.problems[1]
    out = cat.get("advantage", "half_baseline").function()(_adv([1, 0], 2, scale=0.5))
    approx(out.advantages, [0.75, -0.25])
