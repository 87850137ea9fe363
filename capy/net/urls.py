"""Strict URL parsing for fetches: one reading of the host, the same one the HTTP client uses.

SSRF filters are bypassed where two parsers disagree about which host a URL names (`\\@`, spaces,
`#@`, `http:host`), or where a check reads `0177.0.0.1` as a name while the resolver reads it as
127.0.0.1. So: refuse the characters parsers disagree on, let httpx (the client that will connect)
split the URL, and read a host that ends in a number the way browsers and glibc do (WHATWG IPv4
parser: decimal, octal, hex and shortened forms), refusing it when that reading fails.
"""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Whitespace, control characters and backslashes: each is read differently by some URL parser.
_AMBIGUOUS = re.compile(r"[\x00-\x20\x7f\\]")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_HEX_PART = re.compile(r"^0[xX][0-9A-Fa-f]*$")
_OCTAL_PART = re.compile(r"^0[0-7]+$")
_DECIMAL_PART = re.compile(r"^[0-9]+$")


class UrlError(ValueError):
    """A URL capy refuses to read; the message is one sentence a person can act on."""


@dataclass(frozen=True)
class ParsedUrl:
    scheme: str
    host: str  # lowercase ASCII name (IDNA), or the canonical text of `address`
    port: int
    address: IPAddress | None  # set when the host is an IP literal in any accepted form


def url_scheme(url: str) -> str | None:
    """The scheme as written (`file` in `file:///etc/passwd`), lowercased, or None."""
    match = _SCHEME.match(url.strip())
    return match.group(1).lower() if match else None


def parse_url(url: str) -> ParsedUrl:
    """Split an absolute http(s)-style URL, or raise `UrlError` saying what is wrong with it."""
    if not isinstance(url, str) or not url.strip():
        raise UrlError("the URL is empty")
    text = url.strip()
    if _AMBIGUOUS.search(text):
        raise UrlError(
            "the URL contains whitespace, a control character or a backslash, which URL "
            "parsers read differently; percent-encode them"
        )
    scheme = url_scheme(text)
    if scheme is None or not text[len(scheme) + 1 :].startswith("//"):
        raise UrlError("the URL must be absolute, like https://example.com/page")
    authority = re.split(r"[/?#]", text[len(scheme) + 3 :], maxsplit=1)[0]
    if authority.count("@") > 1:
        raise UrlError("the URL has more than one '@' before its host, a known filter bypass")
    return _split_with_httpx(text, scheme)


def _split_with_httpx(text: str, scheme: str) -> ParsedUrl:
    import httpx

    try:
        parsed = httpx.URL(text)
    except (httpx.InvalidURL, ValueError) as exc:
        raise UrlError(f"the URL does not parse: {_hint_for(text) or exc}") from None
    raw_host = parsed.raw_host.decode("ascii", errors="replace")
    if not raw_host:
        raise UrlError("the URL has no host")
    port = parsed.port or {"http": 80, "https": 443}.get(scheme, 0)
    if not 0 < port < 65536:
        raise UrlError(f"the port {port} is out of range (1-65535)")
    address = parse_host_address(raw_host)
    host = str(address) if address is not None else raw_host.lower().rstrip(".")
    return ParsedUrl(scheme=scheme, host=host, port=port, address=address)


def _hint_for(text: str) -> str | None:
    """For hosts httpx refuses (0177.0.0.1), say what a resolver would have made of them."""
    try:
        host = urllib.parse.urlsplit(text).hostname
        address = parse_host_address(host) if host else None
    except (UrlError, ValueError):
        return None
    return f"its host {host!r} is the IP address {address}" if address is not None else None


def parse_host_address(host: str) -> IPAddress | None:
    """The IP address a host denotes, None for a name, `UrlError` for a broken IP form.

    IPv6 zone ids (`fe80::1%eth0`) name a local interface, so they are refused outright.
    """
    host = host.strip("[]")
    if ":" in host:
        if "%" in host:
            raise UrlError("IPv6 zone ids name a local network interface and are not allowed")
        try:
            return ipaddress.IPv6Address(host)
        except ValueError:
            raise UrlError(f"{host!r} is not a valid IPv6 address") from None
    if _ends_in_number(host):
        return parse_legacy_ipv4(host)
    return None


def _ends_in_number(host: str) -> bool:
    """WHATWG: a host whose last label is numeric must be an IPv4 address (or is invalid)."""
    labels = host.split(".")
    if labels[-1] == "" and len(labels) > 1:
        labels.pop()
    last = labels[-1]
    return bool(_DECIMAL_PART.match(last) or _HEX_PART.match(last))


def parse_legacy_ipv4(host: str) -> ipaddress.IPv4Address:
    """Every IPv4 spelling `inet_aton` accepts: 2130706433, 0177.0.0.1, 0x7f.1, 127.1, `127.0.0.1.`.

    Overflowing parts (425.510.425.510, 7147006462) are refused, not wrapped.
    """
    labels = host.split(".")
    if labels[-1] == "" and len(labels) > 1:
        labels.pop()
    if len(labels) > 4 or any(label == "" for label in labels):
        raise UrlError(f"{host!r} is not a valid IPv4 address")
    numbers = [_ipv4_number(label, host) for label in labels]
    *head, last = numbers
    if any(part > 255 for part in head) or last >= 256 ** (5 - len(numbers)):
        raise UrlError(f"{host!r} is not a valid IPv4 address: a part is out of range")
    value = last
    for index, part in enumerate(head):
        value += part * 256 ** (3 - index)
    return ipaddress.IPv4Address(value)


def _ipv4_number(label: str, host: str) -> int:
    # Explicit forms only: int() alone would also take "0o177", "1_0" and Unicode digits.
    if _HEX_PART.match(label):
        return int(label[2:] or "0", 16)
    if _OCTAL_PART.match(label):
        return int(label, 8)
    if _DECIMAL_PART.match(label) and not (len(label) > 1 and label.startswith("0")):
        return int(label, 10)
    raise UrlError(f"{host!r} is not a valid IPv4 address: {label!r} is not a number")
