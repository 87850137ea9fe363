"""The SSRF guard: which hosts and addresses a fetch may reach, judged by the security pack.

A host is judged by name first (metadata names, localhost), then by every address it resolves
to: one blocked address refuses the host, because a resolver may hand out either. Anything the
guard cannot decide (a name that does not resolve, an IP form that does not parse) is refused.
The same `SsrfGuard.check_host` runs twice per fetch: in `check_url` before the request, and in
the transport at connect time, where the answer decides which IP the socket connects to.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from capy.net.urls import IPAddress, UrlError, parse_host_address, parse_url, url_scheme
from capy.rules.views.base import RuleView
from capy.rules.views.security import BlockedHostname, BlockedNetwork, MetadataHost, Ssrf

Resolver = Callable[[str, int], Iterable[IPAddress]]


class HostBlocked(Exception):
    """A host or address the guard refuses; `str()` is the reason, `rule_id` the deciding rule."""

    def __init__(self, reason: str, rule_id: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.rule_id = rule_id


@dataclass(frozen=True)
class UrlVerdict:
    url: str
    allowed: bool
    reason: str
    host: str | None = None
    addresses: tuple[str, ...] = ()
    rule_id: str | None = None


@dataclass(frozen=True)
class AllowList:
    """Hosts a user opened on purpose (`fetch.allow_hosts`): names, addresses and networks."""

    names: frozenset[str] = frozenset()
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()

    @classmethod
    def parse(cls, hosts: Iterable[str]) -> AllowList:
        names: set[str] = set()
        networks = []
        for entry in hosts:
            text = entry.strip().strip("[]").lower().rstrip(".")
            try:
                networks.append(ipaddress.ip_network(text, strict=False))
            except ValueError:
                names.add(text)
        return cls(frozenset(names), tuple(networks))

    def allows_name(self, name: str) -> bool:
        return name in self.names

    def allows_address(self, address: IPAddress) -> bool:
        return any(address.version == net.version and address in net for net in self.networks)


def resolve(host: str, port: int) -> tuple[IPAddress, ...]:
    """Every address the system resolver gives for a host (scope ids dropped)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    found: dict[IPAddress, None] = {}
    for *_, sockaddr in infos:
        found[ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])] = None
    return tuple(found)


class SsrfGuard:
    def __init__(
        self, ssrf: Ssrf, allow_hosts: Iterable[str] = (), resolver: Resolver | None = None
    ) -> None:
        self.ssrf = ssrf
        self.allow = AllowList.parse(allow_hosts)
        # Looked up at call time so tests that replace socket.getaddrinfo reach the guard too.
        self._resolver = resolver

    def check_host(self, host: str, port: int) -> tuple[IPAddress, ...]:
        """The addresses a connection to `host` may use, or `HostBlocked` saying why not."""
        try:
            address = parse_host_address(host)
        except UrlError as exc:
            raise HostBlocked(f"blocked: {exc}") from None
        name = str(address) if address is not None else host.strip().lower().rstrip(".")
        name_allowed = address is None and self.allow.allows_name(name)
        if address is None:
            self._check_name(name, name_allowed)
            addresses = self._resolve(name, port)
        else:
            addresses = (address,)
        for ip in addresses:
            self._check_address(ip, name, name_allowed)
        return addresses

    def _check_name(self, name: str, name_allowed: bool) -> None:
        rule = self.ssrf.host_rule(name)
        if rule is None:
            return
        # Metadata services hand out cloud credentials: no allow-list entry opens them.
        if isinstance(rule, MetadataHost) or not name_allowed:
            raise HostBlocked(f"blocked: {name} is {describe_rule(rule)} [{rule.id}]", rule.id)

    def _resolve(self, name: str, port: int) -> tuple[IPAddress, ...]:
        try:
            addresses = tuple((self._resolver or resolve)(name, port))
        except (OSError, UnicodeError, ValueError) as exc:
            raise HostBlocked(
                f"blocked: {name} did not resolve ({_short(exc)}); capy refuses hosts it "
                "cannot check"
            ) from None
        if not addresses:
            raise HostBlocked(f"blocked: {name} resolved to no address")
        return addresses

    def _check_address(self, ip: IPAddress, name: str, name_allowed: bool) -> None:
        metadata = self._metadata_rule(ip)
        rule = metadata or self.ssrf.address_rule(ip)
        if rule is None:
            return
        if metadata is None and (name_allowed or self.allow.allows_address(ip)):
            return
        subject = str(ip) if name == str(ip) else f"{name} resolves to {ip}, which"
        raise HostBlocked(f"blocked: {subject} is {describe_rule(rule, ip)} [{rule.id}]", rule.id)

    def _metadata_rule(self, ip: IPAddress) -> RuleView | None:
        candidates: list[IPAddress] = [ip]
        if isinstance(ip, ipaddress.IPv6Address):
            for embedding in self.ssrf.embedded_ipv4:
                if embedding.active and (inner := embedding.extract(ip)) is not None:
                    candidates.append(inner)
        for candidate in candidates:
            rule = self.ssrf.host_rule(str(candidate))
            if isinstance(rule, MetadataHost):
                return rule
        return None


def describe_rule(rule: RuleView, address: IPAddress | None = None) -> str:
    if isinstance(rule, BlockedNetwork):
        where = f"in {rule.cidr} ({rule.name}, {rule.rfc})"
        if address is not None and address.version != rule.network.version:
            return f"an IPv6 form of an IPv4 address {where}"
        return where
    if isinstance(rule, MetadataHost):
        return f"a cloud metadata service ({rule.provider})"
    if isinstance(rule, BlockedHostname):
        return "a name for the local host"
    return "refused by the security pack"


def _short(exc: BaseException) -> str:
    text = str(exc.args[-1] if isinstance(exc, OSError) and exc.args else exc)
    return text or type(exc).__name__


def load_ssrf_view(project_dir=None) -> Ssrf:
    from capy.rules import load_rules

    return load_rules(project_dir).view("security").ssrf


def check_url(
    url: str,
    *,
    allow_hosts: Iterable[str] = (),
    ssrf: Ssrf | None = None,
    resolver: Resolver | None = None,
) -> UrlVerdict:
    """Judge a URL before fetching it: scheme, host name, and every address the host resolves to.

    The transport repeats the host check at connect time, so a verdict here is advice for a
    caller that wants to refuse early; it is not what keeps internal addresses safe.
    """
    ssrf = ssrf if ssrf is not None else load_ssrf_view()
    if not isinstance(url, str) or not url.strip():
        return UrlVerdict(str(url), False, "blocked: the URL is empty")
    scheme = url_scheme(url)
    if scheme is None or not ssrf.scheme_allowed(scheme):
        allowed = " or ".join(f"{name}://" for name in ssrf.allowed_schemes)
        if scheme is None:
            return UrlVerdict(url, False, f"blocked: the URL must start with {allowed}")
        return UrlVerdict(
            url, False, f"blocked: the scheme {scheme!r} is not allowed; use {allowed}"
        )
    try:
        parsed = parse_url(url)
    except UrlError as exc:
        return UrlVerdict(url, False, f"blocked: {exc}")
    guard = SsrfGuard(ssrf, allow_hosts, resolver)
    try:
        addresses = guard.check_host(parsed.host, parsed.port)
    except HostBlocked as exc:
        # Always closed, whatever `fail_closed` says: an unresolvable name cannot be fetched
        # anyway, and a guard that opens on errors is one an attacker can steer into opening.
        return UrlVerdict(url, False, exc.reason, parsed.host, rule_id=exc.rule_id)
    shown = ", ".join(str(ip) for ip in addresses)
    return UrlVerdict(
        url, True, f"allowed: {parsed.host} ({shown})", parsed.host, tuple(map(str, addresses))
    )
