"""A real OpenAI-compatible chat server on loopback with scripted replies, for tests."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler

from tests.loopback_helpers import serve_loopback

GOOD = {"choices": [{"message": {"role": "assistant", "content": " A short summary. "}}]}


@contextmanager
def chat_server(script: list[tuple[int, bytes, float]]) -> Iterator[tuple[str, list[dict]]]:
    """Serve POST /v1/chat/completions answering with `script` in turn (status, body, delay);
    yields the base URL and the requests seen (body and Authorization header)."""
    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            seen.append(
                {
                    "path": self.path,
                    "auth": self.headers.get("Authorization"),
                    "body": json.loads(self.rfile.read(length)),
                }
            )
            status, body, delay = script[min(len(seen), len(script)) - 1]
            time.sleep(delay)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    with serve_loopback("127.0.0.1", Handler) as port:
        yield f"http://127.0.0.1:{port}/v1", seen
