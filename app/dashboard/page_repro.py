"""Repro: flagged methods with their recommendation, a form that starts a reproduction run (the repro API's
launch: a background worker process, with the run's power shown first), the run queue with live status and
progress, cancel, and the verdict, class of evidence, mechanism rates and curves of finished runs. Every
line about a run names its model, parameters, task, steps and seed pairs (``RunRecord.setup``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import altair as alt
import pandas as pd
import streamlit as st

from radar.app.context import Radar
from radar.app.dashboard import data, period, reproduce
from radar.app.dashboard.page_reports import list_reports
from radar.app.reproductions import Reproductions
from radar.reports.build import load_report
from radar.reports.recommend import Recommendation, match_preset, preset_patterns
from radar.repro.records import RunRecord
from radar.repro.sizes import SIZES  # not repro.policy: that imports torch (8 s on a first load)
from radar.repro.tasks import TASKS
from radar.store import Workspace
from radar.store.errors import RadarError

REFRESH_S = 2.0


def _api(root: str) -> Reproductions:
    """The repro API of the page's workspace: radar.toml's presets beside the built-ins (app.wiring)."""
    from radar.app import wiring  # defers scipy, faiss, bm25s

    return wiring.reproductions(Radar.at(Path(root)))


def render() -> None:
    root = data.page_root()
    st.title("Reproduction runs")
    try:
        api = _api(root)
    except RadarError as exc:  # a bad [[repro.presets]] table: one line, the page stops here
        st.error(data.md(f"radar: {exc}"))
        return
    _flagged(root, api)
    _launch_form(api)
    _queue(root)
    _finished(api)


# -- flagged methods --------------------------------------------------------------------------------
def _flagged(root: str, api: Reproductions) -> None:
    st.subheader("Flagged methods")
    ver = data.version(root)
    facets = data.facets(root, ver)
    chosen = period.picker(root, ver)  # the dashboard's one week; its trends as the weekly job kept them
    found = period.trends(root, ver, chosen.label)[0] if chosen is not None and facets.counts["documents"] else None
    flagged = [m for m in found.terms.new_methods if m.kind in data.METHOD_KINDS] if found else []
    if flagged:
        st.caption(
            data.md(
                f"from the trends of {found.label if found else ''}: methods a paper of the last months introduces "
                "(its method card), most-named first"
            )
        )
        st.dataframe(pd.DataFrame(data.method_rows(flagged)), hide_index=True)
        _reproduce_flagged(root, api, [m.name for m in flagged])
    else:
        st.caption("No methods flagged by `radar trends` yet; the reproducible presets and the claim each run checks:")
    week, recs = latest_recommendations(Workspace(Path(root)), chosen.label if chosen else None)
    if recs:
        st.caption(f"recommendations of the {week} report (`radar report`)")
        st.dataframe(
            pd.DataFrame(
                [
                    {
                        "method": r.method,
                        "action": r.action,
                        "reason": r.reason.replace("`", ""),  # a table cell shows no code spans
                        "preset": r.evidence.preset,
                        "papers": r.evidence.count,
                        "last run": reproduce.run_line(r.evidence.run) if r.evidence.run is not None else "",
                    }
                    for r in recs
                ]
            ),
            hide_index=True,
        )
        reproduce.recommendations(
            root,
            [r for r in recs if r.evidence.preset],
            "repro",
            empty="none of these recommendations has a reproduction preset to run",
        )
    presets = api.presets.describe()
    st.dataframe(
        pd.DataFrame(
            [{"method": p.name, "title": p.title, "arXiv": p.arxiv, "claim checked": p.claim} for p in presets]
        ),
        hide_index=True,
    )


def _reproduce_flagged(root: str, api: Reproductions, names: list[str]) -> None:
    """A Reproduce button for each flagged method that a reproduction preset (built-in or radar.toml's) matches."""

    patterns = preset_patterns(api.presets.titles())
    matched = {p: n for n in names if (p := match_preset(n, patterns))}
    if not matched:
        return
    reproduce.show_message()
    for preset, name in matched.items():
        left, right = st.columns([6, 1])
        left.markdown(data.md(f"{name}: reproducible with the {preset} preset"))
        with right:
            reproduce.button(root, preset, "repro", key=f"flagged-reproduce-{preset}")


def latest_recommendations(ws: Workspace, week: str | None = None) -> tuple[str, list[Recommendation]]:
    """(week, recommendations) of the report of ``week`` (None: the newest readable one), or ("", []); read by the
    report module's loader."""

    for folder in [ws.report_dir(week)] if week else list_reports(ws):
        built = load_report(folder)
        if built is not None:
            return folder.name, list(built.content.recommendations)
    return "", []


# -- start a run ------------------------------------------------------------------------------------
def _launch_form(api: Reproductions) -> None:
    st.subheader("Start a run")
    methods = api.presets.names()
    with st.form("rp_launch"):
        c1, c2, c3 = st.columns(3)
        # default: the preset the latest report recommends reproducing, else DAPO
        wanted = [r.evidence.preset for r in latest_recommendations(api.ws)[1] if r.evidence.preset]
        first = next((m for m in wanted if m in methods), "dapo" if "dapo" in methods else methods[0])
        method = c1.selectbox("Method", methods, index=methods.index(first))
        baseline = c1.selectbox(
            "Baseline",
            ["(the method's own)", *methods],
            help="the method's own baseline is grpo (gspo for luspo); the method itself gives an A/A run",
        )
        task = c2.selectbox("Task", list(TASKS))
        preset = c2.selectbox("Preset", list(SIZES), help="tiny: CPU in minutes; small: for a GPU")
        seeds = c3.number_input("Seed pairs", min_value=1, max_value=20, value=5)
        steps = c3.number_input("Steps (0 = preset default)", min_value=0, max_value=100_000, value=0)
        device = c3.selectbox("Device", ["auto", "cpu", "cuda"])
        submitted = st.form_submit_button("Start run", type="primary")
    if submitted:
        try:
            spec = api.spec(
                method,
                "" if baseline.startswith("(") else baseline,
                task=task,
                preset=preset,
                seeds=int(seeds),
                steps=int(steps),
                device=device,
            )
            power = api.plan(spec)
            run, _ = api.launch(spec, power)
        except RadarError as exc:
            st.error(data.md(f"radar: {exc}"))
        else:
            st.success(
                data.md(f"started {run.id} ({run.setup}); it trains in the background (log: {api.log_path(run.id)})")
            )
            st.caption(data.md(f"power: {power.text}"))


# -- queue ------------------------------------------------------------------------------------------
def _queue(root: str) -> None:
    active = [r for r in _api(root).runs() if r.active]
    st.subheader("Queue")
    # re-run just this part every REFRESH_S seconds while something is running
    _queue_fragment(root, REFRESH_S if active else None)


def _queue_body(root: str) -> int:
    """The active runs with progress and a cancel button; returns how many there are."""
    runs = _api(root).runs()
    active = [r for r in runs if r.active]
    if not active:
        st.caption(f"nothing running; {len(runs)} run(s) recorded")
    for run in active:
        c1, c2 = st.columns([5, 1])
        c1.progress(
            min(max(run.progress, 0.0), 1.0),
            text=data.md(
                f"{run.id} · {run.status}{' (cancelling)' if run.cancel_requested else ''} · "
                f"{run.method} vs {run.baseline}: {run.setup} · {100 * run.progress:.0f}%"
            ),
        )
        c2.button(
            "Cancel",
            key=f"cancel-{run.id}",
            on_click=_cancel,
            args=(root, run.id),
            disabled=run.cancel_requested,
        )
    return len(active)


@st.fragment
def _queue_fragment_static(root: str) -> None:
    _queue_body(root)
    st.button("Refresh", key="rp_refresh")


@st.fragment(run_every=REFRESH_S)
def _queue_fragment_live(root: str) -> None:
    if not _queue_body(root):
        st.rerun(scope="app")  # the last run finished: show it under finished runs, stop refreshing


def _queue_fragment(root: str, every: float | None) -> None:
    (_queue_fragment_live if every else _queue_fragment_static)(root)


def _cancel(root: str, run_id: str) -> None:
    try:
        _api(root).cancel(run_id)
    except RadarError as exc:
        st.session_state["rp_msg"] = data.md(f"radar: {exc}")


# -- finished runs ----------------------------------------------------------------------------------
def _finished(api: Reproductions) -> None:
    st.subheader("Finished runs")
    if msg := st.session_state.pop("rp_msg", None):
        st.error(msg)
    runs = [r for r in api.runs() if not r.active]
    if not runs:
        st.caption("none yet")
        return
    table = [
        {
            "run": r.id,
            "status": r.status,
            "method": r.method,
            "baseline": r.baseline,
            "model, parameters, task, steps, seed pairs": r.setup,
            "evidence": (r.verdict.evidence_class or "unclassified") if r.verdict else "",
            "verdict": r.verdict.overall if r.verdict else "",
            "finished": r.finished_at,
        }
        for r in runs
    ]
    st.dataframe(pd.DataFrame(table), hide_index=True)
    chosen = st.selectbox("Run", [r.id for r in runs], key="rp_run")
    record = next(r for r in runs if r.id == chosen)
    if record.error:
        st.error(data.md(record.error))
    st.markdown(data.md(f"**{record.method} vs {record.baseline}**: {record.setup}"))
    if record.verdict is not None:
        v = record.verdict
        st.markdown(f"**Verdict: {data.md(v.overall)}**" + ("" if v.calibrated else " (an old, uncalibrated verdict)"))
        if v.evidence_class:
            st.markdown(data.md(f"**Evidence: {v.evidence_class}** ({v.evidence_reason})"))
        st.markdown(data.md(v.summary))
        if v.metrics:
            st.dataframe(
                pd.DataFrame(
                    [
                        {
                            "metric": t.title,
                            "label": t.label,
                            "effect (pts)": None if t.effect is None else round(100 * t.effect, 2),
                            "95% CI (pts)": "n/a"
                            if t.interval[0] is None or t.interval[1] is None
                            else f"[{100 * t.interval[0]:+.1f}, {100 * t.interval[1]:+.1f}]",
                            "p": t.p,
                            "p (Holm)": t.p_adjusted,
                            "n": t.n,
                            "test": t.test,
                        }
                        for t in v.metrics
                    ]
                ),
                hide_index=True,
            )
        if v.seed_noise is not None:
            cal = v.seed_noise.calibration
            st.caption(
                data.md(
                    f"seed noise (sd of per-seed differences): {v.seed_noise.sd_difference}; "
                    + (f"A/A run {cal.run}: {cal.sd_difference}" if cal else "no A/A run on this setting yet")
                )
            )
        if v.power is not None:
            st.caption(data.md(f"power: {v.power.text}"))
        if v.claim:
            why = f" ({v.claim_reason})" if v.claim_reason else ""
            st.caption(data.md(f"claim: {v.claim} -> {v.claim_status}{why}"))
        _mechanisms(record)
        if record.eval_overlap is not None:
            st.caption(data.md(f"evaluation prompts seen in training (measured): {record.eval_overlap.share}"))
    _profile(record)
    curves = _curves(api.ws, record.id)
    if curves is not None:
        st.altair_chart(curves)
    for plot in record.plots:
        if Path(plot).is_file():
            st.image(plot, caption=Path(plot).name)
    if record.metrics:
        with st.expander("Metrics"):
            st.json(record.metrics)


# the per-arm tables of a run: column -> the attribute shown (of ArmMechanisms, of ArmProfile)
MECHANISM_COLUMNS = {
    "overlong punished": "overlong_rate",
    "clip low": "clip_low",
    "clip high": "clip_high",
    "weights capped": "capped_share",
    "zero-variance groups": "zero_var_share",
    "zero-variance trained": "zero_var_trained",
    "length (tokens)": "length",
    "length per 100 steps": "length_slope",
    "right-answer length": "correct_length",
    "wrong-answer length": "incorrect_length",
}
PROFILE_COLUMNS = {
    "step s": "step_s",
    "generation s": "generate_s",
    "reward s": "reward_s",
    "reference s": "ref_s",
    "optimisation s": "train_s",
    "tokens/s": "tokens_per_s",
    "peak GB": "peak_mem_gb",
    "device": "device",
    "memory": "peak_mem_kind",
}


def _arm_table(record: RunRecord, by_arm: Mapping[str, object], columns: Mapping[str, str]) -> None:
    """One row per arm (method, then the baseline as named in the run): the arm's ``columns``."""
    names = {"method": record.method, "baseline": f"{record.baseline} (baseline)"}
    rows = [
        {"arm": names.get(arm, arm)} | {label: getattr(value, attr) for label, attr in columns.items()}
        for arm, value in by_arm.items()
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True)


def _mechanisms(record: RunRecord) -> None:
    """Per arm: the rates of the levers the methods are about (mean over steps and seed pairs)."""
    mech = record.verdict.mechanisms if record.verdict is not None else {}
    if not mech:
        return
    st.markdown("**Mechanisms** (did the levers engage? mean over steps and seed pairs)")
    _arm_table(record, mech, MECHANISM_COLUMNS)


def _profile(record: RunRecord) -> None:
    """The efficiency profile beside the verdict: time per step split, throughput, peak memory."""
    profiles = record.profiles
    if not profiles:
        return
    st.markdown("**Efficiency** (mean per optimiser step over seeds)")
    if record.efficiency_text:
        st.caption(data.md(f"{record.method} vs {record.baseline}: {record.efficiency_text}"))
    _arm_table(record, profiles, PROFILE_COLUMNS)


def _curves(ws: Workspace, run_id: str) -> alt.Chart | None:
    """Held-out accuracy per evaluation step, every arm and seed, from the run folder's metrics/*.jsonl."""
    rows = []
    for path in sorted((ws.run_dir(run_id) / "metrics").glob("*-seed*.jsonl")):
        arm, seed = path.stem.rsplit("-seed", 1)
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "heldout" in rec and "step" in rec:
                rows.append({"step": rec["step"], "heldout": rec["heldout"], "arm": arm, "seed": seed})
    if not rows:
        return None
    frame = pd.DataFrame(rows)
    return (
        alt.Chart(frame, title="held-out greedy accuracy per evaluation step (no smoothing)")
        .mark_line(opacity=0.8)
        .encode(
            x="step:Q",
            y=alt.Y("heldout:Q", title="held-out accuracy"),
            color="arm:N",
            detail="seed:N",
            tooltip=["arm", "seed", "step", "heldout"],
        )
    )


if __name__ == "__main__":
    render()
