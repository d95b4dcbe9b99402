"""[app] and [dashboard] of radar.toml: where `radar app` serves the dashboard, and the address people reach it
at. The composition root's own sections (settings.py reads them; the dashboard's pages never do)."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from radar.store.config import TomlTable, dataclass_from
from radar.store.errors import ConfigError

# a DNS name (labels of letters, digits and '-'): a wildcard would turn the DNS-rebinding guard off
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?"
_HOST_NAME = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(?:\.{_LABEL})*\.?$")


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class AppConfig:
    """[app] in radar.toml: where the dashboard listens."""

    host: str = "127.0.0.1"  # loopback only; see the README on exposing it safely
    port: int = 8501
    # extra Host names the dashboard answers to (e.g. the name of a reverse proxy in front of it); the
    # bind address, and localhost/127.0.0.1/::1 on loopback, always count. Any other Host is refused
    # (DNS rebinding: a web page whose name resolves to 127.0.0.1 must not drive the dashboard).
    allowed_hosts: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not 1 <= self.port <= 65535:
            raise ConfigError(f"[app] port must be 1..65535 (got {self.port}); e.g. --port 8501")
        if not self.host or any(c.isspace() for c in self.host):
            raise ConfigError(f"[app] host {self.host!r} is not a host name or address; e.g. --host 127.0.0.1")
        for name in self.allowed_hosts:
            if not _HOST_NAME.match(name) and not _is_address(name):
                raise ConfigError(
                    f"[app] allowed_hosts: {name!r} is not a host name (no '*', scheme, port or path); list each "
                    'name the dashboard is reached by, e.g. allowed_hosts = ["radar.lab.example"]'
                )

    @classmethod
    def from_section(cls, table: TomlTable) -> AppConfig:
        return dataclass_from(cls, table, "[app]")

    def trusted_hosts(self) -> list[str]:
        """Host names (no port) accepted in a request's Host header."""
        names = [self.host, *self.allowed_hosts]
        if self.loopback:
            names += ["localhost", "127.0.0.1", "::1", "[::1]"]
        if ":" in self.host:
            names.append(f"[{self.host}]")
        return list(dict.fromkeys(n.lower() for n in names))

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"


def _is_loopback(host: str) -> bool:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


@dataclass(frozen=True)
class DashboardConfig:
    """[dashboard] in radar.toml: how people reach the dashboard from elsewhere (a digest's like / not-for-me
    links). ``public_url`` "" (the default): mails carry no links to it. A loopback address (127.0.0.1,
    localhost, ::1) is refused: it is dead in a reader's mail client, and wrong when the dashboard runs elsewhere."""

    public_url: str = ""

    def __post_init__(self) -> None:
        from urllib.parse import urlparse

        url = self.public_url.strip()
        if not url:
            return
        parts = urlparse(url)
        example = 'e.g. public_url = "https://radar.lab.example/"'
        if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
            raise ConfigError(f"[dashboard] public_url {url!r} is not an http(s) URL with a host; {example}")
        if parts.username or parts.password or parts.query or parts.fragment:
            raise ConfigError(f"[dashboard] public_url {url!r} must carry no user, query or fragment; {example}")
        host = parts.hostname.lower()
        if host == "localhost" or host.endswith(".localhost") or _is_loopback(host):
            raise ConfigError(
                f"[dashboard] public_url {url!r} is a loopback address: links in a mail to it are dead on the "
                f"reader's machine; give the address people reach the dashboard at ({example}), or leave it out "
                "(mails then carry no dashboard links)"
            )

    @classmethod
    def from_section(cls, table: TomlTable) -> DashboardConfig:
        return dataclass_from(cls, table, "[dashboard]")

    @property
    def link_base(self) -> str:
        """The base of links into the dashboard ("" when none may be given)."""
        return self.public_url.strip().rstrip("/")
