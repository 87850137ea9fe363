"""URL and host reading: legacy IPv4 spellings, IPv6 forms that carry IPv4, userinfo tricks,
trailing dots, IDNA, zone ids; public addresses pass, internal ones never do."""

from __future__ import annotations

import ipaddress
import socket

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capy.net import check_url
from capy.net.urls import UrlError, parse_legacy_ipv4, parse_url


def no_dns(host, port):
    raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


def resolver_for(table):
    def resolve(host, port):
        if host not in table:
            return no_dns(host, port)
        return [ipaddress.ip_address(ip) for ip in table[host]]

    return resolve


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("0251.00376.000251.0000376", "169.254.169.254"),
        ("0xA9.0xFE.0xA9.0xFE", "169.254.169.254"),
        ("0251.254.169.254", "169.254.169.254"),
        ("127.0.0.1.", "127.0.0.1"),
        ("0", "0.0.0.0"),
        ("10.1.65535", "10.1.255.255"),
    ],
)
def test_legacy_ipv4_spellings(host, expected):
    assert str(parse_legacy_ipv4(host)) == expected


@pytest.mark.parametrize(
    "host",
    [
        "425.510.425.510",
        "7147006462",
        "0x41414141A9FEA9FE",
        "1.2.3.4.5",
        "08.0.0.1",
        "0o177.0.0.1",
        "1_0.0.0.1",
        "1..1",
        "1.16777216",
    ],
)
def test_broken_ipv4_spellings_are_refused(host):
    with pytest.raises(UrlError):
        parse_legacy_ipv4(host)


def _encode_part(value: int, style: str) -> str:
    return {"dec": str(value), "oct": f"0{value:o}", "hex": f"0x{value:x}"}[style]


@st.composite
def ipv4_spellings(draw):
    """An address and one of the many ways inet_aton accepts to write it."""
    value = draw(st.integers(0, 2**32 - 1))
    parts = draw(st.integers(1, 4))
    octets = value.to_bytes(4, "big")
    head = list(octets[: parts - 1])
    tail = int.from_bytes(octets[parts - 1 :], "big")
    styles = draw(st.lists(st.sampled_from(["dec", "oct", "hex"]), min_size=parts, max_size=parts))
    text = ".".join(_encode_part(v, s) for v, s in zip([*head, tail], styles, strict=True))
    return ipaddress.IPv4Address(value), text


@settings(deadline=None)
@given(ipv4_spellings())
def test_every_inet_aton_spelling_reads_as_the_resolver_reads_it(case):
    address, text = case
    assert socket.inet_aton(text) == address.packed  # the spelling is one glibc accepts ...
    assert parse_legacy_ipv4(text) == address  # ... and the guard reads the same address


@settings(deadline=None)
@given(st.text(alphabet="0123456789xXabcdef.", min_size=1, max_size=24))
def test_the_guard_never_reads_a_different_address_than_inet_aton(text):
    try:
        ours = parse_legacy_ipv4(text)
    except UrlError:
        return  # refused: the URL is blocked, which is always safe
    try:
        theirs = socket.inet_aton(text)
    except OSError:
        return  # glibc refuses forms WHATWG reads ("0x", a trailing dot); those are names to it
    assert ours.packed == theirs


INTERNAL = [
    "127.0.0.1",
    "10.2.3.4",
    "172.20.0.5",
    "192.168.1.1",
    "169.254.169.254",
    "100.100.100.200",
    "0.0.0.0",
    "192.0.0.192",
    "100.64.0.1",
]


@st.composite
def internal_urls(draw):
    """An internal IPv4 written in any form: legacy IPv4, mapped, compatible, NAT64, 6to4."""
    address = ipaddress.IPv4Address(draw(st.sampled_from(INTERNAL)))
    value = int(address)
    form = draw(
        st.sampled_from(
            [
                "dotted",
                "decimal",
                "hex",
                "octal",
                "short",
                "mapped",
                "mapped-dotted",
                "compatible",
                "nat64",
                "nat64-local",
                "6to4",
            ]
        )
    )
    hosts = {
        "dotted": str(address),
        "decimal": str(value),
        "hex": f"0x{value:08x}",
        "octal": ".".join(f"0{octet:o}" for octet in address.packed),
        "short": f"{address.packed[0]}.{int.from_bytes(address.packed[1:], 'big')}",
        "mapped": f"[{ipaddress.IPv6Address((0xFFFF << 32) | value)}]",
        "mapped-dotted": f"[::ffff:{address}]",
        "compatible": f"[{ipaddress.IPv6Address(value)}]",
        "nat64": f"[{ipaddress.IPv6Address((0x64FF9B << 96) | value)}]",
        "nat64-local": "[{}]".format(
            ipaddress.IPv6Address(
                (0x0064FF9B0001 << 80) | ((value >> 16) << 64) | ((value & 0xFFFF) << 40)
            )
        ),
        "6to4": f"[{ipaddress.IPv6Address((0x2002 << 112) | (value << 80) | 1)}]",
    }
    port = draw(st.sampled_from(["", ":80", ":8080"]))
    dot = draw(st.sampled_from(["", "."])) if not hosts[form].startswith("[") else ""
    userinfo = draw(st.sampled_from(["", "public.example.com@", "user:pw@"]))
    return f"http://{userinfo}{hosts[form]}{dot}{port}/x", address


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(internal_urls())
def test_internal_addresses_are_blocked_in_every_form(ssrf, case):
    url, address = case
    verdict = check_url(url, ssrf=ssrf, resolver=no_dns)
    assert not verdict.allowed, (url, address, verdict.reason)


@pytest.mark.parametrize(
    "url",
    [
        "http://93.184.216.34/",
        "https://8.8.8.8:8443/dns",
        "http://1.1.1.1./",
        "http://[2606:4700:4700::1111]/",
        "http://[64:ff9b::808:808]/",  # NAT64 of a public IPv4
        "http://16843009/",  # 1.1.1.1 written as one number
        "http://user@93.184.216.34/",
    ],
)
def test_public_addresses_pass(ssrf, url):
    verdict = check_url(url, ssrf=ssrf, resolver=no_dns)
    assert verdict.allowed, verdict.reason
    assert verdict.addresses


@pytest.mark.parametrize(
    "url",
    [
        "http://public.example.com@127.0.0.1/",
        "http://127.0.0.1#@public.example.com/",
        "http://127.0.0.1?@public.example.com/",
        "http://127.0.0.1.:80/",
        "http://[::1]/",
        "http://[fe80::1%25eth0]/",
        "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",  # Teredo
        "http://[::127.0.0.1]/",  # IPv4-compatible
        "http://LOCALHOST./",
        "http://app.localhost/",
        "http://Metadata.Google.Internal./",
    ],
)
def test_tricks_that_name_the_local_host_are_blocked(ssrf, url):
    verdict = check_url(url, ssrf=ssrf, resolver=no_dns)
    assert not verdict.allowed, verdict.reason


def test_names_are_read_as_idna_and_resolved(ssrf):
    resolver = resolver_for({"xn--bcher-kva.example": ["93.184.216.34"]})
    verdict = check_url("http://Bücher.example/", ssrf=ssrf, resolver=resolver)
    assert verdict.allowed and verdict.host == "xn--bcher-kva.example"


def test_a_name_resolving_to_an_internal_address_is_blocked(ssrf):
    resolver = resolver_for({"intranet.example": ["10.0.0.7"]})
    verdict = check_url("https://intranet.example/wiki", ssrf=ssrf, resolver=resolver)
    assert not verdict.allowed
    assert verdict.rule_id == "security.ssrf-ipv4-private-10"


def test_allow_hosts_opens_only_what_it_names(ssrf):
    resolver = resolver_for({"docs.internal": ["10.0.0.7"], "other.internal": ["10.0.0.8"]})
    allow = ["docs.internal", "127.0.0.1", "192.168.0.0/16"]
    assert check_url(
        "http://docs.internal/", allow_hosts=allow, ssrf=ssrf, resolver=resolver
    ).allowed
    assert check_url("http://127.0.0.1:8000/", allow_hosts=allow, ssrf=ssrf).allowed
    assert check_url("http://192.168.4.4/", allow_hosts=allow, ssrf=ssrf).allowed
    assert not check_url(
        "http://other.internal/", allow_hosts=allow, ssrf=ssrf, resolver=resolver
    ).allowed
    assert not check_url("http://127.0.0.2/", allow_hosts=allow, ssrf=ssrf).allowed
    assert not check_url("http://127.0.0.1/", ssrf=ssrf).allowed  # never by default


@pytest.mark.parametrize(
    "url", ["http://169.254.169.254/", "http://[::ffff:169.254.169.254]/", "http://metadata/"]
)
def test_no_allow_list_entry_opens_a_metadata_service(ssrf, url):
    allow = ["169.254.0.0/16", "169.254.169.254", "::ffff:0:0/96", "metadata"]
    assert not check_url(url, allow_hosts=allow, ssrf=ssrf, resolver=no_dns).allowed


def test_parse_url_keeps_port_and_canonical_host():
    parsed = parse_url("HTTPS://User:pw@Example.COM.:8443/a?b#c")
    assert (parsed.scheme, parsed.host, parsed.port, parsed.address) == (
        "https",
        "example.com",
        8443,
        None,
    )
    assert parse_url("http://[::FFFF:7F00:1]/").address == ipaddress.ip_address("::ffff:7f00:1")


BAD_INPUT = [
    "",
    "   ",
    "not a url",
    "example.com/page",
    "http:127.0.0.1/",
    "http:///path",
    "http://exa mple.com/",
    "http://example.com\\@127.0.0.1/",
    "http://a@b@example.com/",
    "http://example.com:99999/",
    "http://[::1/",
    "http://[fe80::1%25eth0]/",
    "file:///etc/passwd",
    "gopher://localhost:25/_x",
    "javascript:alert(1)",
    "http://\x00example.com/",
    "http://ⓔⓧⓐⓜⓟⓛⓔ.ⓒⓞⓜ/",
    "http://7147006462/",
]


def test_bad_input_gets_one_sentence_and_no_traceback(ssrf, snapshot):
    reasons = {url: check_url(url, ssrf=ssrf, resolver=no_dns).reason for url in BAD_INPUT}
    assert all(reason.startswith("blocked: ") for reason in reasons.values())
    assert all("\n" not in reason for reason in reasons.values())
    assert reasons == snapshot


def test_refusal_reasons_name_the_address_and_rule(ssrf, snapshot):
    urls = [
        "http://2130706433/",
        "http://[::ffff:a9fe:a9fe]/",
        "http://0x7f.1/",
        "http://[64:ff9b::a00:1]/",
        "http://localhost:3000/",
        "http://100.100.100.200/",
    ]
    assert {url: check_url(url, ssrf=ssrf, resolver=no_dns).reason for url in urls} == snapshot


@given(st.text(max_size=60))
@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_arbitrary_text_never_raises(ssrf, text):
    verdict = check_url(text, ssrf=ssrf, resolver=no_dns)
    assert isinstance(verdict.reason, str) and verdict.reason
