"""One person's digest of a period: their top papers (learned or rule ranking), their alerts, and like /
not-for-me links that open the dashboard's People page (which records the verdict; no tracking pixels).

Sent once per (period, channel, recipient) through reports.deliver's channels and the deliveries table,
under the label ``digest:<name>:<period>``; a failed send is retried on the next run.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from html import escape
from urllib.parse import quote, urlencode

import msgspec

from radar.crawler.documents import Document, Documents
from radar.index.embeddings import Embeddings
from radar.index.tags_table import Tags
from radar.reports.config import DeliveryConfig, Profile, ReportConfig, WebhookConfig
from radar.reports.deliver import (
    Job,
    Outcome,
    WebhookPayload,
    post_webhook,
    send_email,
    send_jobs,
    slack_text,
    webhook_recipient,
)
from radar.reports.people.ranking import (
    N_SKIPPED,
    Example,
    PersonScore,
    Training,
    adjust,
    learned_scores,
    rule_scores,
    unit,
)
from radar.reports.people.repository import People, Person, PersonAlert
from radar.reports.period import Period
from radar.reports.render import md_escape, md_url
from radar.store.scrub import url_secrets
from radar.store.table import Database
from radar.store.urls import check_configured_url, check_email

TOP_N = 10


class AlertHit(msgspec.Struct, frozen=True):
    """A saved-search match as the digest and the alert message show it (their JSON: these fields)."""

    id: str
    search: str
    score: float  # rounded to 4 places
    found_at: str | msgspec.UnsetType = msgspec.UNSET  # the digest's rows (``alert_rows``) carry it

    def __post_init__(self) -> None:
        msgspec.structs.force_setattr(self, "score", round(float(self.score), 4))

    @classmethod
    def of(cls, alert: PersonAlert, *, found_at: bool = True) -> AlertHit:
        return cls(alert.doc_id, alert.search, alert.score, alert.found_at if found_at else msgspec.UNSET)


class DigestPaper(msgspec.Struct, frozen=True):
    id: str
    title: str
    score: float  # rounded to 4 places
    why: list[str]
    url: str

    def __post_init__(self) -> None:
        msgspec.structs.force_setattr(self, "score", round(float(self.score), 4))


@dataclass
class Digest:
    person: str
    period: Period
    papers: list[PersonScore]
    alerts: list[AlertHit]
    method: str  # "learned" or "rules"
    dropped: int = 0  # left out by a negative term
    candidates: int = 0
    links: dict[str, dict[str, str]] = field(default_factory=dict)  # doc id -> {like, dislike} dashboard urls


class DigestJson(msgspec.Struct, frozen=True):
    """``Digest`` as `radar people digest --json` prints it."""

    person: str
    week: str
    method: str
    candidates: int
    dropped_by_negative_terms: int
    papers: list[DigestPaper]
    alerts: list[AlertHit]

    @classmethod
    def of(cls, d: Digest) -> DigestJson:
        papers = [DigestPaper(p.doc.id, p.doc.title, p.score, p.why, p.doc.url) for p in d.papers]
        return cls(d.person, d.period.label, d.method, d.candidates, d.dropped, papers, d.alerts)


def _examples(store: Database, docs: list[Document], model_id: str) -> list[Example]:
    vectors = Embeddings(store).current_vectors([d.id for d in docs], model_id) if model_id else {}
    return [Example(d, unit(vectors.get(d.id))) for d in docs]


def training_of(store: Database, person: Person, model_id: str, *, exclude: set[str]) -> Training:
    """The person's liked and not-for-me papers, and a fixed sample of other stored papers as skipped."""
    verdicts = {f.doc_id: f.value for f in People(store).feedback(person.name)}
    docs = Documents(store).of(verdicts)
    liked = [docs[i] for i, v in verdicts.items() if v > 0 and i in docs]
    disliked = [docs[i] for i, v in verdicts.items() if v < 0 and i in docs]
    skipped: list[Document] = []
    if model_id and len(liked) >= 1:
        sample = [
            e.doc_id for e in Embeddings(store).sample_embedded(model_id, N_SKIPPED + len(verdicts) + len(exclude))
        ]
        keep = [i for i in sample if i not in verdicts and i not in exclude][:N_SKIPPED]
        found = Documents(store).of(keep)
        skipped = [found[i] for i in keep if i in found]
    return Training(
        _examples(store, liked, model_id), _examples(store, disliked, model_id), _examples(store, skipped, model_id)
    )


def build_digest(
    store: Database,
    person: Person,
    period: Period,
    cfg: ReportConfig,
    *,
    model_id: str,
    dashboard_url: str = "",
    top_n: int = TOP_N,
    lab: Profile | None = None,
) -> Digest:
    """Rank the period's documents for ``person``; ``model_id`` names the stored embeddings ('' = none). A
    person with no tags and no terms of their own gets the lab-wide [profile] ``lab``'s for the rules."""
    profile = person.profile
    if lab is not None and not (profile.tags or profile.terms):
        profile = replace(profile, tags=dict(lab.tags), terms=dict(lab.terms))
    verdicts = {f.doc_id for f in People(store).feedback(person.name)}
    ids = [i for i in Documents(store).matching(since=period.since, until=period.until) if i not in verdicts]
    found = Documents(store).of(ids)
    docs = [found[i] for i in sorted(found)]
    training = training_of(store, person, model_id, exclude=set(ids))
    if training.learnable and model_id:
        scores, method = learned_scores(training, _examples(store, docs, model_id)), "learned"
    else:
        liked = [ex.doc for ex in training.liked]
        scores, method = rule_scores(docs, Tags(store).scores(ids), profile, liked, period, cfg), "rules"
    kept, dropped = adjust(scores, profile)
    top = [s for s in kept if s.score >= profile.min_score][:top_n]
    alerts = alert_rows(People(store).alerts(person.name, since=period.since))
    digest = Digest(person.name, period, top, alerts, method, dropped, len(docs))
    if dashboard_url:
        digest.links = {p.doc.id: feedback_links(dashboard_url, person.name, p.doc.id) for p in top}
    return digest


def feedback_links(dashboard_url: str, name: str, doc_id: str) -> dict[str, str]:
    """Dashboard People-page urls that record a like / not-for-me when opened (and show what was recorded)."""
    base = dashboard_url.rstrip("/") + "/people?"
    return {
        verdict: base + urlencode({"person": name, verdict: doc_id}, quote_via=quote) for verdict in ("like", "dislike")
    }


# -- rendering -------------------------------------------------------------------------------------------
def render_text(d: Digest) -> str:
    """digest-NAME.md and the mail's text part: Markdown with every value from a feed or a person escaped as
    the report's Markdown escapes it (``md_escape``: HTML specials as entities, Markdown punctuation
    backslash-escaped), links only http(s)."""
    e = md_escape
    lines = [f"Research Radar digest for {e(d.person)}, {e(d.period.describe())} ({d.method} ranking)", ""]
    if not d.papers:
        lines.append("No papers above your cut-off this period.")
    for i, p in enumerate(d.papers, 1):
        lines.append(f"{i}. {e(p.doc.title)} ({e(p.doc.id)}, score {p.score:.2f})")
        lines.append(f"   {md_url(p.doc.url)}" if md_url(p.doc.url) else "")
        lines.append(f"   why: {e('; '.join(p.why))}")
        link = d.links.get(p.doc.id)
        if link:
            lines.append(f"   like: {md_url(link['like'])}  not for me: {md_url(link['dislike'])}")
    if d.alerts:
        lines += ["", "Alerts from your saved searches:"]
        lines += [f"- {e(a.id)} ({e(a.search)}, score {a.score:.3f})" for a in d.alerts]
    return "\n".join(line for line in lines if line is not None) + "\n"


def render_html(d: Digest) -> str:
    """A short HTML page: plain links only (no images, no scripts, no tracking pixels)."""
    items = []
    for p in d.papers:
        title = f"<bdi>{escape(p.doc.title)}</bdi>"  # a right-to-left title cannot reorder what follows it
        if p.doc.url.startswith(("http://", "https://")):
            title = f'<a href="{escape(p.doc.url, quote=True)}">{title}</a>'
        link = d.links.get(p.doc.id)
        actions = (
            f' · <a href="{escape(link["like"], quote=True)}">like</a> · '
            f'<a href="{escape(link["dislike"], quote=True)}">not for me</a>'
            if link
            else ""
        )
        items.append(
            f"<li>{title} <small>({escape(p.doc.id)}, {p.score:.2f}){actions}</small><br>"
            f"<small><bdi>{escape('; '.join(p.why))}</bdi></small></li>"
        )
    alerts = "".join(f"<li>{escape(a.id)} (<bdi>{escape(a.search)}</bdi>)</li>" for a in d.alerts)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>Digest {escape(d.person)} "
        f"{escape(d.period.label)}</title></head><body><h1>Digest for {escape(d.person)}, "
        f"{escape(d.period.describe())}</h1><ol>{''.join(items) or '<li>No papers above your cut-off.</li>'}</ol>"
        + (f"<h2>Alerts</h2><ul>{alerts}</ul>" if alerts else "")
        + "</body></html>"
    )


# -- sending ---------------------------------------------------------------------------------------------
def person_jobs(person: Person, cfg: DeliveryConfig, subject: str, text: str, html: str | None) -> list[Job]:
    """Email through the lab's SMTP settings to the person's address; the person's own webhook."""
    jobs: list[Job] = []
    if person.email and cfg.email.host and cfg.email.sender:

        def send() -> None:
            check_email(person.email, f"person {person.name}'s email")  # a row stored before the check
            msg = EmailMessage()
            msg["Subject"], msg["From"], msg["To"] = subject, cfg.email.sender, person.email
            msg["Date"] = formatdate(localtime=False)
            msg["Message-ID"] = make_msgid(domain=cfg.email.sender.split("@")[-1] or None)
            msg.set_content(text)
            if html is not None:
                msg.add_alternative(html, subtype="html")
            send_email(msg, cfg.email)

        jobs.append(("email", person.email, send, [cfg.email.password()]))
    if person.webhook:
        payload: WebhookPayload = {"text": f"*{slack_text(subject)}*\n{slack_text(text)}"}

        def post() -> None:  # the URL is checked when sent: a bad row fails this person's webhook only
            check_configured_url(person.webhook, f"person {person.name}'s webhook")
            post_webhook(payload, WebhookConfig(url=person.webhook, timeout_s=cfg.webhook.timeout_s))

        jobs.append(("webhook", webhook_recipient(person.webhook), post, url_secrets(person.webhook)))
    return jobs


def send_digest(store: Database, d: Digest, person: Person, cfg: DeliveryConfig) -> list[Outcome]:
    subject = f"Research Radar digest {d.period.label} for {d.person}: {len(d.papers)} papers"
    return send_jobs(
        store,
        f"digest:{d.person}:{d.period.label}",
        person_jobs(person, cfg, subject, render_text(d), render_html(d)),
        cfg,
    )


def alert_rows(alerts: list[PersonAlert]) -> list[AlertHit]:
    return [AlertHit.of(a) for a in alerts]
