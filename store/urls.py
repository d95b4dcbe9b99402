"""Where Radar may send a request, and which e-mail values may reach a message header.

Two checks, both from untrusted places (a feed's redirect, a person's row, a copied radar.toml):

- ``check_configured_url``: a URL someone configured (a webhook, the summary endpoint): http(s) with a host,
  never a link-local or cloud-metadata address (169.254.169.254 and friends answer anyone on the machine
  with credentials). Loopback and private addresses are allowed here: a local relay or mirror is normal.
- ``check_hop``: a redirect target. It passes only as http(s), and a loopback, private, link-local or
  metadata address only when the configured URL named that same host (a test server on 127.0.0.1 may
  redirect to itself; a feed on the internet, or on 127.0.0.1, may not send Radar to 127.0.0.2 or
  169.254.169.254). Host names are resolved to decide; one that does not resolve is refused.

``check_email`` / ``check_header``: an address or header value with CR/LF (header injection) or without the
shape of an address is refused where it is set, so one person's bad row never reaches a mail at all.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable
from urllib.parse import ParseResult, urlparse

from radar.store.errors import one_line

MAX_REDIRECTS = 5
# cloud instance-metadata services (AWS, GCP, Azure, Oracle, OpenStack: 169.254.169.254; AWS IPv6; Alibaba;
# ECS task metadata) and their names
METADATA_HOSTS = frozenset(
    {
        "169.254.169.254",
        "fd00:ec2::254",
        "100.100.100.200",
        "169.254.170.2",
        "metadata.google.internal",
        "metadata.goog",
        "metadata",
        "instance-data",
        "instance-data.ec2.internal",
    }
)
_EMAIL = re.compile(r"^[^@\s<>(),;:\"\[\]\\]+@[A-Za-z0-9](?:[A-Za-z0-9.\-]*[A-Za-z0-9])?$")


class UrlRefused(ValueError):
    """A URL (configured, or a redirect target) Radar will not request; the message is one line naming why."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))  # a host or value from a hostile place may carry a line break


Resolver = Callable[[str, int], list[str]]


def resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (getaddrinfo)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return sorted({str(info[4][0]) for info in infos})


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        addr = ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    return addr


def is_internal(address: str) -> bool:
    """A loopback, private, link-local, shared (CGNAT), reserved, unspecified or multicast address."""
    addr = _address(address)
    return addr is not None and (not addr.is_global or addr.is_multicast)


def is_metadata(host: str) -> bool:
    """A cloud metadata service's address or name, or any link-local address (where they live)."""
    name = host.lower().strip("[]").rstrip(".")
    addr = _address(name)
    return name in METADATA_HOSTS or (addr is not None and (addr.is_link_local or str(addr) in METADATA_HOSTS))


def _parts(url: str, what: str) -> tuple[ParseResult, int | None]:
    """urlparse and the port, with urllib's own ValueError (an unbalanced bracket, port 99999) as UrlRefused."""
    try:
        parts = urlparse(url)
        return parts, parts.port
    except ValueError as exc:
        raise UrlRefused(f"{what} is not a valid URL ({exc})") from None


def check_configured_url(url: str, what: str) -> str:
    """``url`` as configured for ``what`` (e.g. "person alice's webhook"), or UrlRefused with one line."""
    parts, _ = _parts(url, what)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UrlRefused(f"{what} must be an http(s) URL with a host, e.g. https://hooks.slack.com/services/...")
    if any(c.isspace() or not c.isprintable() for c in url):  # controls, DEL, C1, format characters
        raise UrlRefused(f"{what} has spaces or control characters; give the URL as the chat tool shows it")
    if is_metadata(parts.hostname):
        raise UrlRefused(
            f"{what} points at {parts.hostname}, a link-local / cloud-metadata address; give the webhook's own URL"
        )
    addr = _address(parts.hostname)
    if addr is not None and (addr.is_unspecified or addr.is_multicast):
        raise UrlRefused(f"{what} points at {parts.hostname}, which is no host to send to")
    return url


def check_hop(target: str, origin_host: str, *, resolver: Resolver = resolve) -> None:
    """A redirect to ``target`` from a request whose configured URL named ``origin_host``; UrlRefused if not
    allowed (see the module's docstring)."""
    parts, port = _parts(target, f"the redirect from {origin_host}")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UrlRefused(f"{origin_host} redirected to a non-http(s) URL ({parts.scheme or 'no scheme'}:); refused")
    host = parts.hostname.lower().rstrip(".")
    if host == origin_host.lower().rstrip("."):
        return
    if is_metadata(host):
        raise UrlRefused(f"{origin_host} redirected to {host}, a link-local / cloud-metadata address; refused")
    literal = _address(host)
    if literal is not None:
        addresses = [str(literal)]
    else:
        try:
            addresses = resolver(host, port or (443 if parts.scheme == "https" else 80))
        except (OSError, UnicodeError):
            raise UrlRefused(f"{origin_host} redirected to {host}, which does not resolve; refused") from None
    internal = [a for a in addresses if is_internal(a) or is_metadata(a)]
    if internal:
        raise UrlRefused(
            f"{origin_host} redirected to {host} ({internal[0]}), a loopback/private address the configured URL "
            "does not name; refused (configure that URL itself if it is meant)"
        )


def check_header(value: str, what: str) -> str:
    """A value that goes into a mail header: no CR, LF or other control character."""
    if any(ord(c) < 32 or 127 <= ord(c) <= 159 or c in "\u2028\u2029" for c in value):
        raise UrlRefused(f"{what} has a line break or control character; it would go into a mail header; retype it")
    return value


def check_email(address: str, what: str) -> str:
    """One plain address (local@domain), no display name, no line breaks."""
    check_header(address, what)
    if not _EMAIL.match(address) or len(address) > 254:
        raise UrlRefused(f"{what} {address!r} is not an email address like alice@example.org")
    return address
