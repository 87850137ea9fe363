"""A documentation page served on loopback for the demo's fetch, as a real site would serve it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# A page shaped like real documentation: navigation, scripts and a footer around the content,
# which capy drops before indexing.
_OPTIONS = [
    ("retry_attempts", "3", "How many times a failed request is retried before giving up."),
    ("retry_backoff_ms", "250", "Milliseconds to wait before the first retry; doubles each time."),
    ("pool_size", "10", "Connections kept open per host."),
    ("read_timeout_s", "30", "Seconds to wait for a response before the request fails."),
    ("tls_verify", "true", "Whether server certificates are checked. Never disable in production."),
]


def _page() -> bytes:
    rows = "\n".join(
        f"<tr><td><code>{name}</code></td><td>{default}</td><td>{text}</td></tr>"
        for name, default, text in _OPTIONS
    )
    filler = "\n".join(
        f"<p>Section {n}: the client reuses connections from its pool, and each request "
        f"carries its own deadline so that a slow host cannot stall the others ({n}).</p>"
        for n in range(1, 120)
    )
    html = f"""<!doctype html><html><head><title>httpkit configuration</title>
<script>window.analytics = {{track: function() {{}}}};</script>
<style>body {{ font-family: sans-serif; }}</style></head>
<body><nav><a href="/">Home</a> | <a href="/api">API</a> | <a href="/blog">Blog</a></nav>
<header><h1>httpkit documentation</h1></header>
<main><h1>Configuration</h1>
<p>httpkit reads its settings from <code>httpkit.toml</code> in the project root.</p>
<h2>Options</h2><table><tr><th>option</th><th>default</th><th>meaning</th></tr>
{rows}</table>
<h2>Retries</h2><p>Requests that fail with a connection error or a 503 are retried up to
<code>retry_attempts</code> times, waiting <code>retry_backoff_ms</code> first and twice as long
after each further failure.</p>
<h2>Background</h2>{filler}
</main><footer>Copyright httpkit authors. <a href="/privacy">Privacy</a></footer></body></html>"""
    return html.encode("utf-8")


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = _page()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return  # the demo prints its own account of what happened


@contextmanager
def docs_site() -> Iterator[str]:
    """Serve the page on 127.0.0.1 for the duration; yields its URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, name="capy-demo-site", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/docs/configuration"
    finally:
        server.shutdown()
        server.server_close()
