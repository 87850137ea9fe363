"""One way to run a real HTTP server on a loopback address for a test, shared by the transport
tests (tests/net) and the fetch tests (tests/fetch)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TypeVar

import pytest

T = TypeVar("T")
# Linux routes all of 127.0.0.0/8 to the loopback interface: a second host for redirect tests.
SECOND_HOST = "127.0.0.2"


@contextmanager
def serve_loopback(host: str, handler: type[BaseHTTPRequestHandler]) -> Iterator[int]:
    """Serve `handler` on `host` at a free port (yielded) until the block ends."""
    httpd = ThreadingHTTPServer((host, 0), handler)
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def on_second_host(serve: Callable[[str], Iterator[T]]) -> Iterator[T]:
    """`serve` on the second loopback host, or skip where the platform cannot bind it."""
    try:
        yield from serve(SECOND_HOST)
    except OSError as exc:  # pragma: no cover - platforms without the whole /8 on lo
        pytest.skip(f"cannot bind {SECOND_HOST} here: {exc}")


def text_handler(body: bytes) -> type[BaseHTTPRequestHandler]:
    """A handler answering every GET with `body` (200, text/plain), logging nothing."""

    class TextHandler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    return TextHandler
