"""httpx clients whose every TCP connection passes the SSRF guard at connect time.

Checking a URL before a request is not enough: the name can resolve differently a second later
(DNS rebinding), and a redirect names a new host the caller never saw. So the guard sits in the
httpcore network backend, the one place every connection (first request, redirect, retry) goes
through. It resolves the host itself, refuses it if any address is blocked, and connects to the
checked IP, while TLS (SNI, certificate check) and the Host header still use the name.
"""

from __future__ import annotations

from collections.abc import Iterable

import httpcore
import httpx

from capy.net.ssrf import HostBlocked, SsrfGuard, load_ssrf_view
from capy.net.urls import IPAddress
from capy.rules.views.security import Ssrf

DEFAULT_TIMEOUT = 30.0


class SsrfBlockedError(httpx.ConnectError):
    """A connection the SSRF guard refused; the message says which address and which rule."""

    def __init__(self, message: str, *, rule_id: str | None = None) -> None:
        super().__init__(message)
        self.rule_id = rule_id


def _checked_addresses(guard: SsrfGuard, host: str, port: int) -> tuple[IPAddress, ...]:
    try:
        return guard.check_host(host, port)
    except HostBlocked as exc:
        raise SsrfBlockedError(exc.reason, rule_id=exc.rule_id) from None


def _unix_socket_refused() -> SsrfBlockedError:
    return SsrfBlockedError("blocked: unix sockets reach local services and are not allowed")


class GuardedBackend(httpcore.NetworkBackend):
    def __init__(self, guard: SsrfGuard, inner: httpcore.NetworkBackend | None = None) -> None:
        self._guard = guard
        self._inner = inner or httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        failure: Exception | None = None
        for address in _checked_addresses(self._guard, host, port):
            try:
                return self._inner.connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc  # try the next checked address, as the resolver order suggests
        assert failure is not None  # check_host never returns an empty tuple
        raise failure

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        raise _unix_socket_refused()

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class AsyncGuardedBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, guard: SsrfGuard, inner: httpcore.AsyncNetworkBackend | None = None):
        self._guard = guard
        self._inner = inner or httpcore.AnyIOBackend()

    async def connect_tcp(
        self, host, port, timeout=None, local_address=None, socket_options=None
    ) -> httpcore.AsyncNetworkStream:
        import anyio.to_thread

        # getaddrinfo blocks; run it off the event loop like asyncio's own resolver does.
        addresses = await anyio.to_thread.run_sync(_checked_addresses, self._guard, host, port)
        failure: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    str(address), port, timeout, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None
        raise failure

    async def connect_unix_socket(self, path, timeout=None, socket_options=None):
        raise _unix_socket_refused()

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def _refuse_scheme(ssrf: Ssrf, request: httpx.Request) -> None:
    if not ssrf.scheme_allowed(request.url.scheme):
        raise SsrfBlockedError(f"blocked: the scheme {request.url.scheme!r} is not allowed")


def _ssl_context(verify: bool):
    # None lets httpcore build its verified default context on the first https connection, so
    # a client that only ever fetches http pays nothing for certificates.
    return None if verify else httpx.create_ssl_context(verify=False, trust_env=False)


# The base transports' __init__ is not called: all it does is build a connection pool (with a
# proxy taken from arguments), and httpx has no public way to hand that pool a network backend.
# These build the one pool they use, connecting through the guard and never through a proxy (a
# proxy would make the guard judge the proxy's address instead of the target's).
class GuardedTransport(httpx.HTTPTransport):
    def __init__(self, guard: SsrfGuard, *, verify: bool = True, http2: bool = False) -> None:
        self._pool = httpcore.ConnectionPool(
            ssl_context=_ssl_context(verify), http2=http2, network_backend=GuardedBackend(guard)
        )
        self._ssrf = guard.ssrf

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        _refuse_scheme(self._ssrf, request)
        return super().handle_request(request)


class AsyncGuardedTransport(httpx.AsyncHTTPTransport):
    def __init__(self, guard: SsrfGuard, *, verify: bool = True, http2: bool = False) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=_ssl_context(verify),
            http2=http2,
            network_backend=AsyncGuardedBackend(guard),
        )
        self._ssrf = guard.ssrf

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        _refuse_scheme(self._ssrf, request)
        return await super().handle_async_request(request)


def _client_options(ssrf: Ssrf, timeout: float, max_redirects: int | None) -> dict:
    return {
        "follow_redirects": True,
        "max_redirects": ssrf.max_redirects if max_redirects is None else max_redirects,
        "timeout": timeout,
        "trust_env": False,
    }


def guarded_client(
    *,
    allow_hosts: Iterable[str] = (),
    timeout: float = DEFAULT_TIMEOUT,
    max_redirects: int | None = None,
    ssrf: Ssrf | None = None,
    verify: bool = True,
) -> httpx.Client:
    """An httpx client that follows redirects and refuses every internal address it meets."""
    ssrf = ssrf if ssrf is not None else load_ssrf_view()
    transport = GuardedTransport(SsrfGuard(ssrf, allow_hosts), verify=verify)
    return httpx.Client(transport=transport, **_client_options(ssrf, timeout, max_redirects))


def async_guarded_client(
    *,
    allow_hosts: Iterable[str] = (),
    timeout: float = DEFAULT_TIMEOUT,
    max_redirects: int | None = None,
    ssrf: Ssrf | None = None,
    verify: bool = True,
) -> httpx.AsyncClient:
    """The asyncio/trio twin of `guarded_client`."""
    ssrf = ssrf if ssrf is not None else load_ssrf_view()
    transport = AsyncGuardedTransport(SsrfGuard(ssrf, allow_hosts), verify=verify)
    return httpx.AsyncClient(transport=transport, **_client_options(ssrf, timeout, max_redirects))


def project_client(project_dir=None, *, ssrf: Ssrf | None = None) -> httpx.Client:
    """A guarded client as a project's settings ask: `fetch.allow_hosts`, `fetch.timeout`."""
    from capy.config import load_settings

    settings = load_settings(project_dir).settings
    return guarded_client(
        allow_hosts=settings.fetch.allow_hosts,
        timeout=settings.fetch.timeout,
        ssrf=ssrf if ssrf is not None else load_ssrf_view(project_dir),
    )
