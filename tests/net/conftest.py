"""Loopback HTTP servers for the transport tests: real sockets on 127.0.0.x, never elsewhere."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

import pytest
from loopback_helpers import on_second_host, serve_loopback


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
    with serve_loopback(host, _handler_for(record)) as port:
        record.port = port
        yield record


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    yield from _serve("127.0.0.1")


@pytest.fixture
def other_server() -> Iterator[LoopbackServer]:
    yield from on_second_host(_serve)


@pytest.fixture(scope="session")
def ssrf():
    """The shipped security pack's SSRF section, built once: no overlays can reach it."""
    from capy.rules.ruleset import build_ruleset

    return build_ruleset(include_shipped=True).view("security").ssrf
