"""Deliver a built report: a folder copy, email over SMTP, a Slack-compatible webhook.

Each (period, channel, recipient) is one row of the deliveries table. A row that says sent is
never sent again (a rerun of `radar report --send` or `radar weekly` skips it); a failure is
recorded with its error and retried on the next run. Credentials are never logged or stored:
errors are reported without them, and a webhook is recorded by host and a hash of its url
(Slack webhook urls are secrets).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import smtplib
import ssl
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path
from typing import Any, NotRequired, Protocol, TypedDict
from urllib.parse import urlparse

import requests

from radar.crawler.http import request_checked
from radar.reports.build import BuiltReport
from radar.reports.config import DeliveryConfig, EmailConfig, WebhookConfig
from radar.reports.deliveries import Deliveries
from radar.reports.render import Chart, render_email_html, render_text
from radar.store.errors import RadarError
from radar.store.scrub import scrub_line, url_secrets
from radar.store.table import Database
from radar.store.text import strip_invisible
from radar.store.urls import UrlRefused, check_configured_url


class SlackText(TypedDict):
    type: str  # plain_text | mrkdwn
    text: str


class SlackBlock(TypedDict):
    type: str  # header | section | context
    text: NotRequired[SlackText]
    elements: NotRequired[list[SlackText]]


class WebhookPayload(TypedDict):
    """What a webhook is sent (Slack incoming-webhook JSON; other chat tools read ``text``)."""

    text: str
    blocks: NotRequired[list[SlackBlock]]
    period: NotRequired[str]


@dataclass
class Outcome:
    """One delivery; its fields are its JSON in `radar report --send --json` and `radar weekly --json`."""

    channel: str
    recipient: str
    status: str  # sent | failed | already-sent
    error: str = ""
    attempts: int = 0


def webhook_recipient(url: str) -> str:
    parts = urlparse(url)
    return f"{parts.hostname}#{hashlib.sha256(url.encode()).hexdigest()[:12]}"


# -- channels --------------------------------------------------------------------------------------
def subject(report: BuiltReport) -> str:
    h = report.content.headline
    recs = report.content.recommendations
    acts = [r for r in recs if r.action != "watch"]
    tail = f", {len(acts)} to act on" if acts else ""
    return f"{report.content.title} {report.period.label}: {h.documents} documents{tail}"


@dataclass(frozen=True)
class EmailBody:
    """What every recipient's message carries; built once per report (``jobs`` caches it)."""

    text: str
    html: str | None
    charts: tuple[Chart, ...] = ()


def email_body(report: BuiltReport) -> EmailBody:
    """The Markdown as text, and when the report has an HTML page, the page rendered for mail:
    the charts as PNG images referenced by cid instead of inline SVG."""
    doc = report.content.document()
    if report.paths.get("html") is None:
        return EmailBody(render_text(doc), None)
    html, charts = render_email_html(doc)
    return EmailBody(render_text(doc), html, tuple(charts))


def build_email(report: BuiltReport, cfg: EmailConfig, to: str, body: EmailBody | None = None) -> EmailMessage:
    """multipart/alternative: text/plain (the Markdown), then multipart/related holding text/html and
    its chart PNGs attached inline with Content-IDs."""
    body = body or email_body(report)
    msg = EmailMessage()
    msg["Subject"] = subject(report)
    msg["From"] = cfg.sender
    msg["To"] = to
    msg["Date"] = formatdate(localtime=False)
    msg["Message-ID"] = make_msgid(domain=cfg.sender.split("@")[-1] or None)
    msg.set_content(body.text)
    if body.html is not None:
        msg.add_alternative(body.html, subtype="html")
        html_part = msg.get_body(("html",))
        assert html_part is not None  # just added
        for i, chart in enumerate(body.charts, 1):
            html_part.add_related(
                chart.png,
                maintype="image",
                subtype="png",
                cid=f"<{chart.cid}>",
                disposition="inline",
                filename=f"chart-{i}.png",
            )
    return msg


def send_email(msg: EmailMessage, cfg: EmailConfig) -> None:
    context = ssl.create_default_context()
    smtp: smtplib.SMTP
    if cfg.tls == "ssl":
        smtp = smtplib.SMTP_SSL(cfg.host, cfg.port, timeout=cfg.timeout_s, context=context)
    else:
        smtp = smtplib.SMTP(cfg.host, cfg.port, timeout=cfg.timeout_s)
    with smtp:
        if cfg.tls == "starttls":
            smtp.starttls(context=context)
        if cfg.username:
            smtp.login(cfg.username, cfg.password())
        smtp.send_message(msg)


def slack_text(text: Any) -> str:
    """Slack mrkdwn escaping: &, < and > are control characters there; bidi controls and zero-width
    characters (a title stored before ingest removed them) are dropped."""
    return strip_invisible(str(text)).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _slack_link_ok(url: str) -> bool:
    """An http(s) URL with none of Slack's link delimiters in it (a feed could forge a link otherwise)."""
    return url.startswith(("http://", "https://")) and not any(c in url for c in "<>| \n")


def webhook_payload(report: BuiltReport) -> WebhookPayload:
    """Slack incoming-webhook JSON (text fallback + blocks); other chat tools accept `text`."""
    c = report.content
    h = c.headline
    change = "" if h.change_pct is None else f" ({h.change_pct:+.0f}% vs the trailing mean)"
    groups = ", ".join(f"{slack_text(g.group)} {g.count}" for g in h.groups)
    lines = [
        f"*{slack_text(subject(report))}*",
        f"{h.documents} documents{change}" + (f"; {groups}" if groups else ""),
    ]
    recs = [f"• *{slack_text(r.action)}* {slack_text(r.method)}: {slack_text(r.reason)}" for r in c.recommendations[:8]]
    top = [
        f"• <{r.url}|{slack_text(r.title)}>" if _slack_link_ok(r.url) else f"• {slack_text(r.title)}"
        for r in c.top_overall[:5]
    ]
    where = ", ".join(str(p) for k, p in report.paths.items() if k != "json")
    blocks: list[SlackBlock] = [
        {"type": "header", "text": {"type": "plain_text", "text": subject(report)[:150]}},
        {"type": "section", "text": {"type": "mrkdwn", "text": lines[1]}},
    ]
    if recs:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": "*Recommendations*\n" + "\n".join(recs)}})
    if top:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": "*Top papers*\n" + "\n".join(top)}})
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": slack_text(f"report: {where}")}]})
    return {"text": "\n".join(lines + recs), "blocks": blocks, "period": report.period.label}


def post_webhook(payload: WebhookPayload, cfg: WebhookConfig) -> None:
    """POST the JSON; redirects only as ``request_checked`` allows (never the body to another host)."""
    check_configured_url(cfg.url, "the webhook url")  # a person's row stored before the check existed
    with requests.Session() as session:
        resp = request_checked(
            session,
            "POST",
            cfg.url,
            data=json.dumps(payload),
            headers={"Content-Type": "application/json"},
            timeout=cfg.timeout_s,
        )
    if resp.status_code >= 300:
        raise RuntimeError(f"HTTP {resp.status_code}: {resp.text[:120]}")


def copy_to_folder(report: BuiltReport, folder: Path) -> None:
    target = folder.expanduser() / report.period.label
    target.mkdir(parents=True, exist_ok=True)
    for path in report.paths.values():
        shutil.copy2(path, target / path.name)


class _Once:
    """A value computed on first call and kept."""

    def __init__(self, make: Callable[[], EmailBody]) -> None:
        self._make = make
        self._value: EmailBody | None = None

    def __call__(self) -> EmailBody:
        if self._value is None:
            self._value = self._make()
        return self._value


# -- the deliveries table ----------------------------------------------------------------------------
Job = tuple[str, str, Callable[[], None], list[str]]  # channel, recipient, send, secrets to scrub from errors


class Notifier(Protocol):
    """The delivery seam: the (channel, recipient, send, secrets) jobs for one report; ``jobs`` is the real one
    (folder, email, webhook)."""

    def __call__(self, report: BuiltReport, cfg: DeliveryConfig) -> Iterable[Job]: ...


def jobs(report: BuiltReport, cfg: DeliveryConfig) -> Iterator[Job]:
    if cfg.folder:
        folder = Path(cfg.folder)
        yield "folder", str(folder), lambda: copy_to_folder(report, folder), []
    if cfg.email.enabled:
        body = _Once(lambda: email_body(report))  # rendered (charts drawn) once, and only if a recipient is due
        for to in cfg.email.to:
            yield (
                "email",
                to,
                lambda to=to: send_email(build_email(report, cfg.email, to, body()), cfg.email),  # type: ignore[misc]
                [cfg.email.password()],
            )
    if cfg.webhook.url:
        payload = webhook_payload(report)
        yield (
            "webhook",
            webhook_recipient(cfg.webhook.url),
            lambda: post_webhook(payload, cfg.webhook),
            url_secrets(cfg.webhook.url, path=True),
        )


def deliver(store: Database, report: BuiltReport, cfg: DeliveryConfig, notifier: Notifier = jobs) -> list[Outcome]:
    """Send to every configured recipient that has not had this period yet; record each attempt. Callers hold
    the "deliver" workspace lock (app.steps.delivery_lock): two processes never both find a row unsent."""
    return send_jobs(store, report.period.label, notifier(report, cfg), cfg)


def send_jobs(store: Database, label: str, due: Iterable[Job], cfg: DeliveryConfig) -> list[Outcome]:
    """Run each job whose (label, channel, recipient) is not recorded as sent, and record the attempt: what
    ``deliver`` does for a report, also used for per-person digests and alerts (their own labels)."""
    outcomes = []
    log = Deliveries(store)
    for channel, recipient, send, secrets in due:
        row = log.get(label, channel, recipient)
        attempts = row.attempts if row else 0
        if row and row.status == "sent":
            outcomes.append(Outcome(channel, recipient, "already-sent", attempts=attempts))
            continue
        try:
            send()
        except UnicodeError:  # smtplib sends AUTH credentials as ASCII only
            error = (
                f"the SMTP user name or the password in ${cfg.email.password_env} has non-ASCII characters, "
                "which SMTP login cannot send; use an ASCII password (e.g. an app password)"
                if channel == "email"
                else "a value could not be encoded (non-ASCII); check the delivery settings in radar.toml"
            )
            log.record(label, channel, recipient, ok=False, error=error)
            outcomes.append(Outcome(channel, recipient, "failed", error, attempts + 1))
        except (RadarError, UrlRefused) as exc:  # a refused address or URL: its own line names the fix
            error = scrub_line(str(exc), secrets)
            log.record(label, channel, recipient, ok=False, error=error)
            outcomes.append(Outcome(channel, recipient, "failed", error, attempts + 1))
        except Exception as exc:  # noqa: BLE001 - one recipient's failure (a refused header, a dead host) is theirs
            error = scrub_line(f"{type(exc).__name__}: {exc}", secrets)
            log.record(label, channel, recipient, ok=False, error=error)
            outcomes.append(Outcome(channel, recipient, "failed", error, attempts + 1))
        else:
            log.record(label, channel, recipient, ok=True)
            outcomes.append(Outcome(channel, recipient, "sent", attempts=attempts + 1))
    return outcomes


def summarize_outcomes(outcomes: list[Outcome]) -> str:
    sent = sum(o.status == "sent" for o in outcomes)
    failed = [o for o in outcomes if o.status == "failed"]
    skipped = sum(o.status == "already-sent" for o in outcomes)
    text = f"delivered {sent}, already sent {skipped}, failed {len(failed)}"
    if failed:
        text += " (" + "; ".join(f"{o.channel} {o.recipient}: {o.error}" for o in failed) + "; retried next run)"
    return text
