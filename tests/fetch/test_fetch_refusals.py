"""What a fetch refuses, each in one sentence: the SSRF guard, redirects it does not allow,
bodies over the size limit, slow servers, binary types, HTTP errors and unusable URLs."""

from __future__ import annotations

import pytest

from capy.fetch.outcome import Status


def _only_failure(report):
    [outcome] = report.outcomes
    assert outcome.status is Status.FAILED
    assert report.reply.is_error
    return outcome


def test_loopback_is_refused_without_the_allowance(site, fetch):
    outcome = _only_failure(fetch(site.url("/docs.html")))
    assert outcome.failure == "blocked"
    assert "[security.ssrf-ipv4-loopback]" in outcome.message
    assert "fetch.allow_hosts" in outcome.message
    assert site.hits["/docs.html"] == 0


def test_a_redirect_to_another_allowed_loopback_page_is_followed(site, allow_loopback, fetch):
    target = site.url("/docs.html")
    [outcome] = fetch(site.url(f"/redirect?to={target}")).outcomes
    assert outcome.status is Status.INDEXED
    assert outcome.redirected_to == target
    assert outcome.title == "Frobnicator Guide"


def test_a_redirect_to_loopback_without_the_allowance_is_refused(
    site, other_site, allow_loopback, fetch
):
    allow_loopback("127.0.0.2")  # the first hop is allowed, 127.0.0.1 is not
    outcome = _only_failure(fetch(other_site.url(f"/redirect?to={site.url('/docs.html')}")))
    assert outcome.failure == "blocked"
    assert "127.0.0.1" in outcome.message
    assert other_site.hits["/redirect"] == 1
    assert site.hits["/docs.html"] == 0


def test_a_redirect_loop_stops_at_the_redirect_limit(site, allow_loopback, fetch):
    outcome = _only_failure(fetch(site.url("/loop")))
    assert outcome.failure == "too-many-redirects"
    assert "ssrf.max_redirects" in outcome.message
    assert site.hits["/loop"] == 6  # the first request and the five hops the pack allows


def test_a_streamed_body_over_the_limit_is_cut_off(site, allow_loopback, security_overlay, fetch):
    security_overlay("  fetch:\n    max_response_bytes: 16384\n")
    outcome = _only_failure(fetch(site.url("/stream?size=10000000")))
    assert outcome.failure == "too-large"
    assert "16.0 KiB fetch limit" in outcome.message


def test_a_declared_length_over_the_limit_is_refused_before_reading(
    site, allow_loopback, security_overlay, fetch
):
    security_overlay("  fetch:\n    max_response_bytes: 1024\n")
    site.add("/big.txt", "x" * 5000 + "\n", "text/plain")
    outcome = _only_failure(fetch(site.url("/big.txt")))
    assert outcome.failure == "too-large"
    assert "4.9 KiB" in outcome.message


def test_a_slow_server_times_out(site, allow_loopback, monkeypatch, fetch):
    monkeypatch.setenv("CAPY_FETCH__TIMEOUT", "0.5")
    outcome = _only_failure(fetch(site.url("/slow?seconds=3")))
    assert outcome.failure == "timeout"
    assert "0.5 s" in outcome.message and "fetch.timeout" in outcome.message


def test_a_binary_response_is_refused(site, allow_loopback, fetch):
    outcome = _only_failure(fetch(site.url("/image.png")))
    assert outcome.failure == "binary"
    assert "image/png" in outcome.message and "[security.binary-image]" in outcome.message


@pytest.mark.parametrize(
    ("path", "expected"),
    [("/missing", "HTTP 404"), ("/broken", "HTTP 500")],
)
def test_http_errors_are_reported_with_their_status(site, allow_loopback, fetch, path, expected):
    outcome = _only_failure(fetch(site.url(path)))
    assert outcome.failure == "http-status"
    assert expected in outcome.message


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("file:///etc/passwd", "only http:// or https:// URLs"),
        ("http://exa mple.com/", "whitespace"),
        ("example.com/page", "only http:// or https:// URLs"),
    ],
)
def test_unusable_urls_are_refused_before_connecting(fetch, url, expected):
    outcome = _only_failure(fetch(url))
    assert outcome.failure == "invalid-url"
    assert expected in outcome.message


def test_a_name_that_does_not_resolve_is_reported_as_dns(fetch):
    outcome = _only_failure(fetch("http://no-such-host.invalid/"))
    assert outcome.failure == "dns"
    assert "did not resolve" in outcome.message


def test_a_cloud_metadata_address_stays_refused_even_when_allowed(allow_loopback, fetch):
    allow_loopback("169.254.0.0/16")
    outcome = _only_failure(fetch("http://169.254.169.254/latest/meta-data/"))
    assert "[security.metadata-link-local-v4]" in outcome.message
    assert "allow_hosts" not in outcome.message  # no setting opens it, so none is suggested


def test_a_page_over_the_source_cap_is_cut_and_says_so(site, allow_loopback, pack_overlay, fetch):
    pack_overlay("retention", "  size:\n    max_source_bytes: 4096\n")
    site.add("/long.txt", "".join(f"line {n} of a long log\n" for n in range(2000)), "text/plain")
    report = fetch(site.url("/long.txt"))
    [outcome] = report.outcomes
    assert outcome.status is Status.INDEXED
    assert outcome.capped_at == 4096 and outcome.stored_bytes <= 4096
    assert "Cut to the 4.0 KiB source cap" in report.reply.text
