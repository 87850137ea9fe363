"""The guarded httpx clients against real loopback servers: refused unless allowed, redirects
and DNS rebinding caught at connect time, Host and SNI kept as the name."""

from __future__ import annotations

import asyncio
import ipaddress
import socket

import httpx
import pytest

from capy.net import SsrfBlockedError, async_guarded_client, check_url, guarded_client

PUBLIC = "93.184.216.34"  # never connected to: only handed out by the fake resolver


@pytest.fixture
def fake_dns(monkeypatch):
    """Names the test decides; numeric hosts go to the real resolver, which sends no query."""
    real = socket.getaddrinfo
    table: dict[str, list[list[str]]] = {}

    def getaddrinfo(host, port, *args, **kwargs):
        if host in table:
            answers = table[host]
            addresses = answers.pop(0) if len(answers) > 1 else answers[0]
            return [
                (
                    socket.AF_INET6 if ":" in ip else socket.AF_INET,
                    socket.SOCK_STREAM,
                    6,
                    "",
                    (ip, port),
                )
                for ip in addresses
            ]
        try:
            ipaddress.ip_address(host)
        except ValueError:  # any other name: no answer, and no query leaves the machine
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known") from None
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return table


def test_a_direct_fetch_of_loopback_is_refused_before_connecting(server, ssrf):
    with guarded_client(ssrf=ssrf) as client, pytest.raises(SsrfBlockedError) as caught:
        client.get(server.url)
    assert caught.value.rule_id == "security.ssrf-ipv4-loopback"
    assert "127.0.0.1" in str(caught.value)
    assert server.hits == 0


def test_an_allowed_loopback_host_is_fetched(server, ssrf):
    with guarded_client(allow_hosts=["127.0.0.1"], ssrf=ssrf) as client:
        response = client.get(server.url)
    assert response.status_code == 200
    assert response.text == "hello from 127.0.0.1"


def test_an_allowed_network_opens_its_addresses(server, ssrf):
    with guarded_client(allow_hosts=["127.0.0.0/8"], ssrf=ssrf) as client:
        assert client.get(server.url).status_code == 200


def test_a_redirect_to_a_host_that_is_not_allowed_is_refused_at_connect_time(
    server, other_server, ssrf
):
    target = f"{other_server.url}/"
    with (
        guarded_client(allow_hosts=["127.0.0.1"], ssrf=ssrf) as client,
        pytest.raises(SsrfBlockedError),
    ):
        client.get(f"{server.url}/redirect", params={"to": target})
    assert server.hits == 1
    assert other_server.hits == 0


def test_the_same_redirect_is_followed_when_both_hosts_are_allowed(server, other_server, ssrf):
    """Proves the refusal above comes from the guard, not from a broken redirect."""
    target = f"{other_server.url}/"
    with guarded_client(allow_hosts=["127.0.0.1", "127.0.0.2"], ssrf=ssrf) as client:
        response = client.get(f"{server.url}/redirect", params={"to": target})
    assert response.text == "hello from 127.0.0.2"
    assert other_server.hits == 1


def test_a_redirect_to_localhost_by_name_is_refused(server, ssrf):
    target = f"http://localhost:{server.port}/"
    with (
        guarded_client(allow_hosts=["127.0.0.1"], ssrf=ssrf) as client,
        pytest.raises(SsrfBlockedError),
    ):
        client.get(f"{server.url}/redirect", params={"to": target})
    assert server.hits == 1


def test_dns_rebinding_is_caught_at_connect_time(server, fake_dns, ssrf):
    fake_dns["rebind.test"] = [[PUBLIC], ["127.0.0.1"]]
    url = f"http://rebind.test:{server.port}/"
    assert check_url(url, ssrf=ssrf).allowed  # the first answer is public ...
    with guarded_client(ssrf=ssrf) as client, pytest.raises(SsrfBlockedError) as caught:
        client.get(url)  # ... the answer at connect time is not
    assert "rebind.test resolves to 127.0.0.1" in str(caught.value)
    assert server.hits == 0


def test_one_internal_address_among_public_ones_refuses_the_host(server, fake_dns, ssrf):
    fake_dns["mixed.test"] = [[PUBLIC, "127.0.0.1"]]
    with guarded_client(ssrf=ssrf) as client, pytest.raises(SsrfBlockedError):
        client.get(f"http://mixed.test:{server.port}/")
    assert server.hits == 0


def test_an_allowed_name_connects_to_the_checked_ip_and_keeps_the_host_header(
    server, fake_dns, ssrf
):
    fake_dns["docs.test"] = [["127.0.0.1"]]
    with guarded_client(allow_hosts=["docs.test"], ssrf=ssrf) as client:
        response = client.get(f"http://docs.test:{server.port}/")
    assert response.status_code == 200
    assert server.hosts_seen == [f"docs.test:{server.port}"]


def test_a_name_that_does_not_resolve_is_refused(fake_dns, ssrf):
    with (
        guarded_client(ssrf=ssrf) as client,
        pytest.raises(SsrfBlockedError, match="did not resolve"),
    ):
        client.get("http://no-such-host.invalid/")


def test_environment_proxies_are_ignored(server, monkeypatch, ssrf):
    """A proxy would make the guard judge the proxy's address instead of the target's."""
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{server.port}")
    with guarded_client(ssrf=ssrf) as client, pytest.raises(SsrfBlockedError):
        client.get(f"http://[::ffff:127.0.0.1]:{server.port}/")
    assert server.hits == 0


def test_blocked_errors_are_httpx_connect_errors(server, ssrf):
    """Callers that already handle httpx.ConnectError need nothing new to stay safe."""
    with guarded_client(ssrf=ssrf) as client, pytest.raises(httpx.ConnectError):
        client.get(server.url)


def test_the_async_client_applies_the_same_guard(server, other_server, ssrf):
    async def fetch():
        async with async_guarded_client(allow_hosts=["127.0.0.1"], ssrf=ssrf) as client:
            ok = await client.get(server.url)
            with pytest.raises(SsrfBlockedError):
                await client.get(f"{server.url}/redirect", params={"to": other_server.url})
            return ok

    assert asyncio.run(fetch()).text == "hello from 127.0.0.1"
    assert other_server.hits == 0


def test_max_redirects_defaults_to_the_pack(ssrf):
    with guarded_client(ssrf=ssrf) as client:
        assert client.max_redirects == ssrf.max_redirects
    with guarded_client(ssrf=ssrf, max_redirects=1) as client:
        assert client.max_redirects == 1


def test_without_a_view_the_rules_in_force_are_loaded(server):
    with guarded_client() as client, pytest.raises(SsrfBlockedError):
        client.get(server.url)


def test_trusted_project_settings_open_allowed_hosts(server, project_dir, ssrf, monkeypatch):
    from capy.net import project_client
    from capy.trust.store import trust

    with project_client(project_dir, ssrf=ssrf) as client, pytest.raises(SsrfBlockedError):
        client.get(server.url)  # nothing configured: refused
    (project_dir / ".capy").mkdir(exist_ok=True)
    (project_dir / ".capy" / "config.toml").write_text(
        '[fetch]\nallow_hosts = ["127.0.0.1"]\ntimeout = 5\n', encoding="utf-8"
    )
    with project_client(project_dir, ssrf=ssrf) as client, pytest.raises(SsrfBlockedError):
        client.get(server.url)  # a project file may not widen the guard on its own
    trust(project_dir)
    with project_client(project_dir, ssrf=ssrf) as client:
        assert client.get(server.url).status_code == 200
        assert client.timeout.connect == 5
    monkeypatch.setenv("CAPY_FETCH__ALLOW_HOSTS", "127.0.0.2")  # the environment wins
    with project_client(project_dir, ssrf=ssrf) as client, pytest.raises(SsrfBlockedError):
        client.get(server.url)
