"""[report], [profile] and [delivery] sections of radar.toml, each a small validated dataclass.

Credentials never live here in clear: the SMTP password is read from the environment variable
named by ``password_env``; host, port, user, sender, recipients and the webhook url may come from
the environment too (RADAR_SMTP_HOST, RADAR_SMTP_PORT, RADAR_SMTP_USER, RADAR_SMTP_FROM,
RADAR_SMTP_TO (comma-separated), RADAR_WEBHOOK_URL), which wins over radar.toml.

Each ``from_section`` is the parse edge: it takes its table as radar.toml parsed it (``TomlTable``) and
checks every key and value before the dataclass is built.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from urllib.parse import urlparse

from radar.store.config import TomlTable, TomlValue, check_keys, check_types
from radar.store.errors import ConfigError
from radar.store.urls import UrlRefused, check_configured_url, check_email, check_header

FORMATS = ("md", "html", "pdf")
TLS_MODES = ("starttls", "ssl", "none")


def _checked(check: Callable[[str, str], object], value: str, what: str) -> None:
    """A radar.toml value through a store.urls check: its refusal as one ConfigError line."""
    try:
        check(value, what)
    except UrlRefused as exc:
        raise ConfigError(f"{exc}; fix it in radar.toml") from None


def _allowed(cls: type) -> set[str]:
    """The keys of ``cls``'s radar.toml table (its fields; `from` for the email sender)."""
    return {f.name for f in fields(cls)} | ({"from"} if cls is EmailConfig else set())


def _weights(value: TomlValue, where: str) -> dict[str, float]:
    """A list of names (weight 1 each) or a table name -> weight."""
    table: Mapping[str, TomlValue] = {str(v): 1.0 for v in value} if isinstance(value, list) else {}
    if not isinstance(value, list):
        if not isinstance(value, Mapping):
            raise ConfigError(f"[{where}] must be a list of names or a table of name = weight")
        table = value
    out = {}
    for key, weight in table.items():
        if not isinstance(weight, int | float) or isinstance(weight, bool) or not 0 < weight <= 10:
            raise ConfigError(f"[{where}] weight of {key!r} must be a number in (0, 10]")
        out[str(key)] = float(weight)
    return out


@dataclass(frozen=True)
class Profile:
    """The lab's interests: tags, terms and liked papers, each with a weight; the frameworks it runs (a method one of
    them took in can be "adopt") and the methods it chose to adopt (its explicit call, beside a framework's)."""

    tags: dict[str, float] = field(default_factory=dict)
    terms: dict[str, float] = field(default_factory=dict)
    liked: dict[str, float] = field(default_factory=dict)
    frameworks: dict[str, float] = field(default_factory=dict)  # framework names ([[sources]] label or name)
    chosen: dict[str, float] = field(default_factory=dict)  # method names the lab decided to adopt

    @classmethod
    def from_section(cls, table: TomlTable) -> Profile:
        check_keys(table, _allowed(cls), "[profile]")
        return cls(**{k: _weights(v, f"profile.{k}") for k, v in table.items()})

    @property
    def empty(self) -> bool:
        """No interests to rank by (frameworks and chosen methods rank nothing)."""
        return not (self.tags or self.terms or self.liked)


@dataclass(frozen=True)
class ReportConfig:
    formats: tuple[str, ...] = ("md", "html")
    top_n: int = 5  # papers per tag
    max_posts: int = 15
    trailing_weeks: int = 4  # the headline compares with the mean of this many earlier periods
    chart_weeks: int = 12  # weeks shown in the per-tag volume charts
    # ranking weights: relevance to the profile, novelty against the trailing weeks, recency in the period
    relevance_weight: float = 0.6
    novelty_weight: float = 0.25
    recency_weight: float = 0.15
    # abstractive summaries from an OpenAI-compatible server (vLLM, SGLang, ...); "" = extractive only
    summary_endpoint: str = ""
    summary_model: str = ""
    summary_api_key_env: str = ""
    summary_timeout_s: float = 20.0  # a total deadline per call, not a socket timeout
    summary_max_bytes: int = 1_000_000  # a reply larger than this is refused as it streams in
    summary_max_calls: int = 200  # calls per command (one report, one `radar methods --week`)
    summary_budget_s: float = 120.0  # seconds per command from its first call; then the rest are extractive
    summary_sentences: int = 2
    title: str = "Research Radar weekly report"

    def __post_init__(self) -> None:
        bad = [f for f in self.formats if f not in FORMATS]
        if bad or not self.formats:
            raise ConfigError(f"[report] formats {list(self.formats)} must be a non-empty subset of {list(FORMATS)}")
        if not 1 <= self.top_n <= 50 or not 0 <= self.max_posts <= 200:
            raise ConfigError("[report] top_n must be 1..50 and max_posts 0..200")
        if not 1 <= self.trailing_weeks <= 26 or not 2 <= self.chart_weeks <= 52:
            raise ConfigError("[report] trailing_weeks must be 1..26 and chart_weeks 2..52")
        weights = (self.relevance_weight, self.novelty_weight, self.recency_weight)
        if min(weights) < 0 or sum(weights) <= 0:
            raise ConfigError("[report] relevance/novelty/recency weights must be >= 0 and not all 0")
        if self.summary_endpoint and urlparse(self.summary_endpoint).scheme not in ("http", "https"):
            raise ConfigError("[report] summary_endpoint must be an http(s) URL such as http://127.0.0.1:8000/v1")
        if self.summary_endpoint:
            _checked(check_configured_url, self.summary_endpoint, "[report] summary_endpoint")
        _checked(check_header, self.title, "[report] title")  # the mail subject starts with it
        if self.summary_endpoint and not self.summary_model:
            raise ConfigError("[report] summary_endpoint needs summary_model (the model name the server serves)")
        if not 0 < self.summary_timeout_s <= 300 or not 1 <= self.summary_sentences <= 6:
            raise ConfigError("[report] summary_timeout_s must be in (0, 300] and summary_sentences 1..6")
        if not 1_000 <= self.summary_max_bytes <= 100_000_000:
            raise ConfigError("[report] summary_max_bytes must be 1000..100000000 (a summary reply is a few KB)")
        if not 1 <= self.summary_max_calls <= 10_000 or not 0 < self.summary_budget_s <= 86_400:
            raise ConfigError("[report] summary_max_calls must be 1..10000 and summary_budget_s in (0, 86400]")

    @classmethod
    def from_section(cls, table: TomlTable, formats: str | None = None) -> ReportConfig:
        check_keys(table, _allowed(cls), "[report]")
        values: dict[str, TomlValue | tuple[TomlValue, ...]] = {
            k: tuple(v) if isinstance(v, list) else v for k, v in table.items()
        }
        if formats is not None:
            values["formats"] = tuple(f.strip() for f in formats.split(",") if f.strip())
        check_types(cls, values, "[report]")  # type: ignore[arg-type]  # TOML's lists as tuples, as the fields hold
        try:
            return cls(**values)  # type: ignore[arg-type]  # each value's type checked above
        except TypeError as exc:
            raise ConfigError(f"[report]: {exc}") from None


@dataclass(frozen=True)
class EmailConfig:
    host: str = ""
    port: int = 587
    tls: str = "starttls"
    username: str = ""
    password_env: str = "RADAR_SMTP_PASSWORD"
    sender: str = ""  # `from` in radar.toml
    to: tuple[str, ...] = ()
    timeout_s: float = 30.0

    def __post_init__(self) -> None:
        if self.tls not in TLS_MODES:
            raise ConfigError(f"[delivery.email] tls must be one of {', '.join(TLS_MODES)}")
        if not 1 <= self.port <= 65535:
            raise ConfigError("[delivery.email] port must be 1..65535 (587 starttls, 465 ssl, 25 none)")
        if self.to and not self.host:
            raise ConfigError('[delivery.email] has recipients but no host; set host = "smtp.example.org"')
        if self.to and not self.sender:
            raise ConfigError('[delivery.email] needs from = "radar@example.org" to send')
        bad = [a for a in (*self.to, self.sender) if a and "@" not in a]
        if bad:
            raise ConfigError(f"[delivery.email] {bad[0]!r} is not an email address")
        for address in self.to:
            _checked(check_email, address, "[delivery.email] to:")
        for key in ("sender", "host", "username"):
            _checked(check_header, getattr(self, key), f"[delivery.email] {'from' if key == 'sender' else key}")
        if self.timeout_s <= 0:
            raise ConfigError("[delivery.email] timeout_s must be > 0")
        if self.username and self.tls == "none" and self.host not in ("localhost", "127.0.0.1", "::1"):
            raise ConfigError(
                '[delivery.email] would send the password unencrypted (tls = "none" with a '
                'username); use tls = "starttls" or "ssl"'
            )

    @property
    def enabled(self) -> bool:
        return bool(self.host and self.to)

    def password(self) -> str:
        return os.environ.get(self.password_env, "") if self.password_env else ""


@dataclass(frozen=True)
class WebhookConfig:
    url: str = ""
    timeout_s: float = 10.0

    def __post_init__(self) -> None:
        if self.url and urlparse(self.url).scheme not in ("http", "https"):
            raise ConfigError("[delivery.webhook] url must be an http(s) URL (a Slack incoming-webhook URL works)")
        if self.url:
            _checked(check_configured_url, self.url, "[delivery.webhook] url")
        if self.timeout_s <= 0:
            raise ConfigError("[delivery.webhook] timeout_s must be > 0")


def _subtable(table: TomlTable, sub: str) -> TomlTable:
    """[delivery.email] or [delivery.webhook] as a table of its own (a copy), or one line saying it is none."""
    value = table.get(sub, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"[delivery] {sub} must be a [delivery.{sub}] table")
    return dict(value)


@dataclass(frozen=True)
class DeliveryConfig:
    folder: str = ""  # also copy each report into this folder (e.g. a shared drive)
    email: EmailConfig = field(default_factory=EmailConfig)
    webhook: WebhookConfig = field(default_factory=WebhookConfig)

    @classmethod
    def from_section(cls, table: TomlTable, environ: Mapping[str, str] | None = None) -> DeliveryConfig:
        env = os.environ if environ is None else environ
        check_keys(table, _allowed(cls), "[delivery]")
        email_t, hook_t = _subtable(table, "email"), _subtable(table, "webhook")
        check_keys(email_t, _allowed(EmailConfig), "[delivery.email]")
        check_keys(hook_t, _allowed(WebhookConfig), "[delivery.webhook]")
        if "from" in email_t:
            email_t["sender"] = email_t.pop("from")
        overrides = {
            "host": "RADAR_SMTP_HOST",
            "port": "RADAR_SMTP_PORT",
            "username": "RADAR_SMTP_USER",
            "sender": "RADAR_SMTP_FROM",
            "to": "RADAR_SMTP_TO",
        }
        for key, var in overrides.items():
            if env.get(var):
                email_t[key] = env[var]
        if isinstance(port := email_t.get("port"), str):
            if not port.isdigit():
                raise ConfigError("RADAR_SMTP_PORT must be a port number, e.g. 587")
            email_t["port"] = int(port)
        if isinstance(to := email_t.get("to"), str):
            email_t["to"] = [a.strip() for a in to.split(",") if a.strip()]
        check_types(EmailConfig, email_t, "[delivery.email]")
        to_list = email_t.get("to", [])
        to_all = tuple(to_list) if isinstance(to_list, list) else ()  # a list of strings (checked above)
        if env.get("RADAR_WEBHOOK_URL"):
            hook_t["url"] = env["RADAR_WEBHOOK_URL"]
        check_types(cls, {k: v for k, v in table.items() if k == "folder"}, "[delivery]")
        check_types(WebhookConfig, hook_t, "[delivery.webhook]")
        try:  # each value's type checked above
            email = EmailConfig(**(email_t | {"to": to_all}))  # type: ignore[arg-type]
            webhook = WebhookConfig(**hook_t)  # type: ignore[arg-type]
        except TypeError as exc:
            raise ConfigError(f"[delivery]: {exc}") from None
        return cls(folder=str(table.get("folder", "")), email=email, webhook=webhook)

    @property
    def any_channel(self) -> bool:
        return bool(self.folder or self.email.enabled or self.webhook.url)
