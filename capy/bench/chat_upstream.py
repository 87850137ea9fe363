"""A real OpenAI-compatible chat server on loopback with scripted replies, for the proxy's
benchmark and tests: `python -m capy.bench.chat_upstream` prints its port and serves until
stopped.

The request's `model` picks the script:
- `json` (or anything else): a chat completion whose text answers the last user message.
- `stream`: the same text as server-sent events, `CHUNKS` deltas, then `[DONE]`.
- `slow-stream`: `stream` with `SLOW_CHUNK_S` between deltas.
- `slow`: `json` after `SLOW_S`.
- `tools`: a reply that calls a tool (`stream-tools`: the same, streamed in pieces).
- `fail`: HTTP 500 with an OpenAI-shaped error.
- `malformed`: HTTP 200 whose body is not JSON.
HTTP/1.1 with keep-alive (streams are chunked), as a real API answers.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHUNKS = 12
SLOW_CHUNK_S = 0.15
SLOW_S = 3.0
# Sentences the reply repeats after its first line (a reply of a realistic length).
REPLY_BODY = " The change keeps the parser's behaviour and the tests pass."
TOOL_CALL = {"name": "read_file", "arguments": '{"path": "src/app/parser.py"}'}


def reply_text(request: dict[str, Any], sentences: int = 4) -> str:
    messages = request.get("messages") if isinstance(request.get("messages"), list) else []
    users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    last = users[-1].get("content") if users else ""
    asked = last if isinstance(last, str) else json.dumps(last)
    return f"Answer to: {asked[:200]}." + REPLY_BODY * sentences


def completion(text: str | None, calls: list[dict] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": "scripted",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
    }


def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": "scripted",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def stream_events(text: str, with_tool: bool) -> Iterator[bytes]:
    yield chunk({"role": "assistant", "content": ""})
    if with_tool:
        call = {"index": 0, "id": "call_1", "type": "function"}
        yield chunk({"tool_calls": [{**call, "function": {"name": TOOL_CALL["name"]}}]})
        half = len(TOOL_CALL["arguments"]) // 2
        for piece in (TOOL_CALL["arguments"][:half], TOOL_CALL["arguments"][half:]):
            yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
    else:
        step = max(1, len(text) // CHUNKS)
        for start in range(0, len(text), step):
            yield chunk({"content": text[start : start + step]})
    yield chunk({}, finish="stop")
    yield b"data: [DONE]\n\n"


class ChatHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[dict[str, Any]]  # set per server (`handler_for`)

    def setup(self) -> None:
        super().setup()
        # As API servers do: each write goes out at once (no Nagle wait for the previous ACK).
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        try:
            request = json.loads(raw)
        except ValueError:
            request = {}
        self._saw(request)
        model = str(request.get("model") or "json")
        text = reply_text(request)
        if model == "fail":
            error = {"error": {"message": "scripted failure", "type": "server_error", "code": None}}
            return self._send(500, json.dumps(error).encode())
        if model == "malformed":
            return self._send(200, b"<html>not json</html>")
        if model == "slow":
            time.sleep(SLOW_S)
        if model in ("stream", "slow-stream", "stream-tools"):
            delay = SLOW_CHUNK_S if model == "slow-stream" else 0.0
            return self._stream(stream_events(text, model == "stream-tools"), delay)
        if model == "tools":
            call = {"id": "call_1", "type": "function", "function": TOOL_CALL}
            return self._send(200, json.dumps(completion(None, [call])).encode())
        self._send(200, json.dumps(completion(text)).encode())

    def do_GET(self) -> None:
        self._saw(None)
        self._send(200, json.dumps({"object": "list", "data": [{"id": "json"}]}).encode())

    def _saw(self, body: Any) -> None:
        auth = self.headers.get("Authorization")
        self.seen.append({"path": self.path, "auth": auth, "body": body})

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _stream(self, events: Iterator[bytes], delay: float) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for index, event in enumerate(events):
            if delay and index:
                time.sleep(delay)
            self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def chat_upstream() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Serve on 127.0.0.1 at a free port until the block ends; yields the API root
    (`http://127.0.0.1:PORT/v1`) and the requests seen (path, Authorization, body)."""
    seen: list[dict[str, Any]] = []
    handler = type("ScriptedChat", (ChatHandler,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def main() -> int:
    with chat_upstream() as (url, _seen):
        print(url, flush=True)
        with suppress(KeyboardInterrupt):
            threading.Event().wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
