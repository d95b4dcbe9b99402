"""The "Reproduce" button beside a recommendation or a flagged method: it queues the run `radar weekly` would
queue ([repro]'s task or dataset, model, seeds, steps, device; the same dedupe key, so a method is never run
twice with the same settings) and starts the queue's worker (`radar repro work`) unless one is running or
[repro] run_queued is false. Used by the Overview, Reports and Repro pages; it goes through the repro API
(app/reproductions.py, built by app.wiring) as the CLI and weekly do."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import streamlit as st

from radar.app.context import Radar
from radar.app.dashboard import data
from radar.reports.recommend import Recommendation
from radar.reports.runs import RunSummary
from radar.store.errors import RadarError

MESSAGE = "repro_button_msg"


def queue(root: str, preset: str, origin: str) -> None:
    """on_click: queue ``preset``; the outcome is shown by ``show_message`` on the next run of the page."""
    from radar.app import wiring  # defers scipy, faiss, bm25s

    try:
        api = wiring.reproductions(Radar.at(Path(root)))
        queued = api.reproduce(preset, queued_by=f"dashboard ({origin})")
    except RadarError as exc:
        st.session_state[MESSAGE] = ("error", f"radar: {exc}")
        return
    if queued.new:
        how = (
            "its worker runs the queue in the background"
            if api.config.run_queued
            else "run the queue with `radar repro work` ([repro] run_queued = false)"
        )
        st.session_state[MESSAGE] = ("success", f"queued {queued.run_id} ({preset}); {how}")
    else:
        st.session_state[MESSAGE] = (
            "info",
            f"{preset} with these settings is {queued.status} ({queued.run_id}); not queued twice",
        )


def show_message() -> None:
    kind, text = st.session_state.pop(MESSAGE, (None, ""))
    if kind:
        getattr(st, kind)(data.md(text))


def button(root: str, preset: str, origin: str, key: str) -> None:
    st.button(
        "Reproduce",
        key=key,
        on_click=queue,
        args=(root, preset, origin),
        help=f"queue a reproduction of the {preset} preset with the [repro] settings (never twice the same run)",
    )


def recommendations(
    root: str, recs: Sequence[Recommendation], origin: str, empty: str = "no recommendations in this report"
) -> None:
    """One row per recommendation: method, action, rule and reason, and a Reproduce button where a preset exists;
    ``empty``: what to say when there is none."""
    show_message()
    if not recs:
        st.caption(empty)
        return
    for i, rec in enumerate(recs):
        preset, run = rec.evidence.preset, rec.evidence.run
        left, right = st.columns([4, 1])  # the button's label unbroken on a laptop screen
        verdict = f"; last reproduction: {run_line(run)}" if run is not None and run.verdict else ""
        left.markdown(
            data.ours(  # our reason's `commands` as code, the rest escaped
                data.one_line(f"{rec.method}: {rec.action} ({rec.rule}) - {rec.reason}{verdict}")
            )
        )
        if preset:
            with right:
                button(root, preset, origin, key=f"{origin}-reproduce-{i}-{preset}")


def run_line(run: RunSummary) -> str:
    """A recommendation's last run in one line: what it compared, its verdict, adoptable or not and why."""
    adoptable = "adoptable" if run.adoptable else "not adoptable"
    return f"{run.method} vs {run.baseline}: {run.verdict} ({adoptable}: {run.adoption})"
