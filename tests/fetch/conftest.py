"""A loopback web site for the fetch tests: real sockets on 127.0.0.x, pages chosen per test.

The SSRF guard refuses loopback, so every test that fetches from here opts in with the
`allow_loopback` fixture (the `CAPY_FETCH__ALLOW_HOSTS` setting), and only for that test.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlsplit

import pytest
from loopback_helpers import on_second_host, serve_loopback

DOCS_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Frobnicator Guide</title>
<script>window.trackingPixel = "analytics-beacon";</script>
<style>.sidebar { color: red }</style></head>
<body>
<header class="site"><a href="/">Home</a> Sitewide banner text</header>
<nav><ul><li><a href="/a">Navigation entry alpha</a></li></ul></nav>
<main><article>
<header><h1>Frobnicator Guide</h1></header>
<h2>Installation</h2><p>Run <code>pip install frobnicator</code> before the first use.</p>
<h2>Calibration</h2><p>The zanzibar coefficient must stay below 0.73 or the rotor stalls.</p>
<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAE" alt="rotor diagram">
</article></main>
<footer>Copyright footer text</footer>
</body></html>
"""

JSON_DOCUMENT = (
    '{"service": {"name": "ledger", "limits": {"max_batch": 417, "timeout_ms": 9000}},'
    ' "regions": ["eu-west", "us-east"]}'
)

Response = tuple[int, dict[str, str], bytes]


@dataclass
class Site:
    host: str
    port: int = 0
    hits: Counter = field(default_factory=Counter)
    routes: dict[str, Callable[[dict[str, list[str]]], Response]] = field(default_factory=dict)

    def url(self, path: str) -> str:
        return f"http://{self.host}:{self.port}{path}"

    def add(self, path: str, body: str | bytes, content_type: str, status: int = 200) -> None:
        data = body.encode() if isinstance(body, str) else body
        self.routes[path] = lambda _query: (status, {"Content-Type": content_type}, data)


def _standard_routes(site: Site) -> None:
    site.add("/docs.html", DOCS_PAGE, "text/html; charset=utf-8")
    site.add("/data.json", JSON_DOCUMENT, "application/json")
    site.add("/notes.txt", "plain notes\nthe quokka protocol uses port 7301\n", "text/plain")
    site.add(
        "/latin1.html",
        "<html><head><title>Caf\xe9</title></head><body><p>cr\xe8me br\xfbl\xe9e recipe</p>"
        "</body></html>".encode("latin-1"),
        "text/html; charset=iso-8859-1",
    )
    site.add("/image.png", b"\x89PNG\r\n\x1a\n" + bytes(256), "image/png")
    site.add("/broken", "internal failure", "text/plain", status=500)
    site.add("/empty.html", "<html><body><script>x()</script></body></html>", "text/html")
    site.routes["/redirect"] = lambda query: (302, {"Location": query["to"][0]}, b"")
    site.routes["/loop"] = lambda _query: (302, {"Location": "/loop"}, b"")
    site.routes["/slow"] = _slow
    # Answers only once two requests wait here at the same time: proof of concurrent fetches
    # that asserts no timing (sequential fetches get a 503 after the barrier gives up).
    together = threading.Barrier(2, timeout=5)
    site.routes["/together"] = lambda _query: _meet(together)


def _meet(barrier: threading.Barrier) -> Response:
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        return 503, {"Content-Type": "text/plain"}, b"alone"
    return 200, {"Content-Type": "text/plain"}, b"met the other request"


def _slow(query: dict[str, list[str]]) -> Response:
    time.sleep(float(query.get("seconds", ["3"])[0]))
    return 200, {"Content-Type": "text/plain"}, b"finally"


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            site.hits[parts.path] += 1
            if parts.path == "/stream":
                self._stream(parse_qs(parts.query))
                return
            route = site.routes.get(parts.path)
            status, headers, body = (
                route(parse_qs(parts.query))
                if route
                else (404, {"Content-Type": "text/plain"}, b"no such page")
            )
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _stream(self, query: dict[str, list[str]]) -> None:
            """`size` bytes of text without a Content-Length: only a streaming cap stops it."""
            size = int(query["size"][0])
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Connection", "close")
            self.end_headers()
            line = b"stream line of filler text\n"
            sent = 0
            try:
                while sent < size:
                    self.wfile.write(line)
                    sent += len(line)
            except OSError:  # the client hung up at its limit, as it should
                pass

        def log_message(self, *args) -> None:
            pass

    return Handler


def _serve(host: str) -> Iterator[Site]:
    site = Site(host)
    _standard_routes(site)
    with serve_loopback(host, _handler(site)) as port:
        site.port = port
        yield site


@pytest.fixture
def site() -> Iterator[Site]:
    yield from _serve("127.0.0.1")


@pytest.fixture
def other_site() -> Iterator[Site]:
    yield from on_second_host(_serve)


@pytest.fixture
def allow_loopback(monkeypatch) -> Callable[[str], None]:
    """Open the SSRF guard for 127.0.0.1 (or the hosts given) in this test only."""

    def allow(hosts: str = "127.0.0.1") -> None:
        monkeypatch.setenv("CAPY_FETCH__ALLOW_HOSTS", hosts)

    allow()
    return allow


@pytest.fixture
def workspace(project_dir):
    from capy.api import Workspace

    return Workspace(project_dir)


@pytest.fixture
def fetch(workspace):
    """Call the library API the MCP tool and the CLI share."""
    from capy.api.fetch import fetch_report

    def run(urls, **options):
        return fetch_report(workspace, urls, **options)

    return run


@pytest.fixture
def search(workspace):
    from capy.store.corpus import search_store

    def run(query: str, **options):
        with workspace.store() as store:
            return search_store(store, [query], **options)[0]

    return run


@pytest.fixture
def security_overlay(pack_overlay) -> Callable[[str], None]:
    """Patch the security pack for this project (smaller limits make tests fast)."""
    return lambda patch: pack_overlay("security", patch)


@pytest.fixture
def pack_overlay(project_rules_dir) -> Callable[[str, str], None]:
    """Patch a shipped pack for this project's rules only."""

    def write(pack: str, patch: str) -> None:
        (project_rules_dir / f"fetch-test-{pack}.yaml").write_text(
            f"pack: fetch-test-{pack}\nschema: overlay.v1\nversion: 1.0.0\n"
            f"description: Smaller {pack} limits for the fetch tests.\n"
            f'requires: ">=0.1"\nextends: {pack}\npatch:\n{patch}',
            encoding="utf-8",
        )

    return write
