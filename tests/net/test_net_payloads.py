"""Every PayloadsAllTheThings SSRF payload that names an internal address is refused.

Names are answered by a table here, never by real DNS (several payload hosts are live services):
the wildcard-DNS names get the addresses upstream says they resolve to; the redirectors and
public proxies get a public address, because their host really is public: what makes them
dangerous is the redirect they answer with, which the transport refuses at connect time
(tests/net/test_net_transport.py).
"""

from __future__ import annotations

import csv
import ipaddress
import socket

from capy.net import check_url

PUBLIC = "93.184.216.34"
INTERNAL_NAMES = {
    "localtest.me": ["::1"],
    "localh.st": ["127.0.0.1"],
    "company.127.0.0.1.nip.io": ["127.0.0.1"],
    "169.254.169.254.nip.io": ["169.254.169.254"],
    # the rebinding name alternates; a resolver may return either, so both are offered at once
    "make-1.2.3.4-rebind-169.254-169.254-rr.1u.ms": ["1.2.3.4", "169.254.169.254"],
}
PUBLIC_HOSTS = {
    "307.r3dir.me",
    "62epax5fhvj3zzmzigyoe5ipkbn7fysllvges3a.302.r3dir.me",
    "nicob.net",
    "help.redacted.com",
    "4d0cf09b9b2d761a7d87be99d17507bce8b86f3b.flaws.cloud",
}


def table_resolver(host: str, port: int):
    if host in INTERNAL_NAMES:
        return [ipaddress.ip_address(ip) for ip in INTERNAL_NAMES[host]]
    if host in PUBLIC_HOSTS:
        return [ipaddress.ip_address(PUBLIC)]
    raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


def load_payloads(path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))


def _payload_rows(shared_testdata):
    return load_payloads(shared_testdata("ssrf", "payloadsallthethings_ssrf.tsv"))


def _host_of(payload: str) -> str | None:
    from urllib.parse import urlsplit

    try:
        return urlsplit(payload).hostname
    except ValueError:
        return None


def test_the_payload_file_has_every_row(shared_testdata):
    rows = _payload_rows(shared_testdata)
    urls = shared_testdata("ssrf", "payloadsallthethings_ssrf_urls.txt").read_text("utf-8")
    assert len(rows) == 149
    assert [row["payload"] for row in rows] == [line for line in urls.split("\n") if line]


def test_every_internal_payload_is_blocked(shared_testdata, ssrf):
    rows = _payload_rows(shared_testdata)
    allowed = []
    for row in rows:
        verdict = check_url(row["payload"], ssrf=ssrf, resolver=table_resolver)
        if verdict.allowed:
            allowed.append((row["payload"], verdict.reason))
    # Only payloads whose host is public may pass the check; the rest must all be refused.
    assert all(_host_of(url) in PUBLIC_HOSTS for url, _ in allowed), allowed
    blocked = len(rows) - len(allowed)
    print(f"\nssrf payloads: {blocked}/{len(rows)} blocked by check_url, {len(allowed)} public")


def test_payloads_with_public_hosts_are_blocked_for_their_scheme_or_shape(shared_testdata, ssrf):
    """Of the public-host payloads, only plain http(s) URLs pass; the redirect is caught later."""
    rows = _payload_rows(shared_testdata)
    passed = {
        row["payload"]
        for row in rows
        if check_url(row["payload"], ssrf=ssrf, resolver=table_resolver).allowed
    }
    assert passed == {
        "https://307.r3dir.me/--to/?url=http://localhost",
        "https://62epax5fhvj3zzmzigyoe5ipkbn7fysllvges3a.302.r3dir.me",
        "http://nicob.net/redir6a",
        "http://nicob.net/redir-http-169.254.169.254:80-",
        "https://help.redacted.com/plugins/servlet/oauth/users/icon-uri?consumerUri=http://169.254.169.254/metadata/v1/maintenance",
        "http://4d0cf09b9b2d761a7d87be99d17507bce8b86f3b.flaws.cloud/proxy/169.254.169.254/latest/meta-data/iam/security-credentials/flaws/",
    }


def test_without_dns_every_payload_is_blocked(shared_testdata, ssrf):
    """Fail closed: with no resolver answer at all, nothing in the file gets through."""

    def no_dns(host, port):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    rows = _payload_rows(shared_testdata)
    assert [
        row["payload"]
        for row in rows
        if check_url(row["payload"], ssrf=ssrf, resolver=no_dns).allowed
    ] == []


def test_stated_equivalents_are_what_the_guard_reads(shared_testdata, ssrf):
    """Where upstream says what an encoded address decodes to, the refusal names that address."""
    rows = [
        row
        for row in _payload_rows(shared_testdata)
        if row["stated_equivalent"] and (_host_of(row["payload"]) or " ")[0].isdigit()
    ]
    assert len(rows) >= 9
    for row in rows:
        stated = _host_of(row["stated_equivalent"]) or row["stated_equivalent"]
        try:
            ipaddress.ip_address(stated)
        except ValueError:
            continue  # a name (example.com): nothing to compare
        verdict = check_url(row["payload"], ssrf=ssrf, resolver=table_resolver)
        assert not verdict.allowed
        if "is not a number" in verdict.reason:
            continue  # 0o177: inet_aton refuses it too, so it is refused as no address at all
        assert stated in verdict.reason, (row["payload"], verdict.reason)
