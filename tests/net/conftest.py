"""Loopback HTTP servers for the transport tests: real sockets on 127.0.0.x, never elsewhere."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest


@dataclass
class LoopbackServer:
    host: str
    port: int
    hosts_seen: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def hits(self) -> int:
        return len(self.hosts_seen)


def _handler_for(server: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            server.hosts_seen.append(self.headers.get("Host", ""))
            parts = urlsplit(self.path)
            target = parse_qs(parts.query).get("to")
            if parts.path == "/redirect" and target:
                self.send_response(302)
                self.send_header("Location", target[0])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = f"hello from {server.host}".encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:  # keep test output clean
            pass

    return Handler


def _serve(host: str) -> Iterator[LoopbackServer]:
    record = LoopbackServer(host, 0)
    httpd = ThreadingHTTPServer((host, 0), _handler_for(record))
    record.port = httpd.server_address[1]
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield record
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    yield from _serve("127.0.0.1")


@pytest.fixture
def other_server() -> Iterator[LoopbackServer]:
    """A second loopback host: Linux routes all of 127.0.0.0/8 to the loopback interface."""
    try:
        yield from _serve("127.0.0.2")
    except OSError as exc:  # pragma: no cover - platforms without the whole /8 on lo
        pytest.skip(f"cannot bind 127.0.0.2 here: {exc}")


@pytest.fixture(scope="session")
def ssrf():
    """The shipped security pack's SSRF section, built once: no overlays can reach it."""
    from capy.rules.ruleset import build_ruleset

    return build_ruleset(include_shipped=True).view("security").ssrf
