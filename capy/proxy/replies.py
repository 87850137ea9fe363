"""The upstream's reply as one assistant message, from a JSON body or from the server-sent
events of a streamed reply (read after the stream was relayed, never while it is).

The first choice is the reply: it is the one a client carries on with (`n` > 1 asks for
alternatives, which the proxy relays and does not record).
"""

from __future__ import annotations

import json
from typing import Any

DATA_FIELD = b"data:"
STREAM_END = b"[DONE]"


def reply_from_json(body: bytes) -> dict[str, Any] | None:
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    choice = _first_choice(data)
    message = choice.get("message") if choice else None
    return message if isinstance(message, dict) else None


def reply_from_stream(chunks: list[bytes]) -> dict[str, Any] | None:
    """The first choice's deltas put together: its text, and each tool call's name and
    arguments (streamed in pieces, by index)."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    seen = False
    for data in _events(b"".join(chunks)):
        choice = _first_choice(data)
        delta = choice.get("delta") if choice else None
        if not isinstance(delta, dict):
            continue
        seen = True
        if isinstance(delta.get("content"), str):
            text.append(delta["content"])
        for piece in delta.get("tool_calls") or ():
            if isinstance(piece, dict):
                _add_call_piece(calls, piece)
    if not seen:
        return None
    reply: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        reply["tool_calls"] = [calls[index] for index in sorted(calls)]
    return reply


def _add_call_piece(calls: dict[int, dict[str, Any]], piece: dict[str, Any]) -> None:
    index = piece.get("index") if isinstance(piece.get("index"), int) else len(calls)
    call = calls.setdefault(
        index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
    )
    if isinstance(piece.get("id"), str):
        call["id"] = piece["id"]
    function = piece.get("function")
    if isinstance(function, dict):
        for field in ("name", "arguments"):
            if isinstance(function.get(field), str):
                call["function"][field] += function[field]


def _events(stream: bytes) -> list[Any]:
    """The JSON of each `data:` line (a malformed one is skipped)."""
    found = []
    for line in stream.splitlines():
        if not line.startswith(DATA_FIELD):
            continue
        payload = line[len(DATA_FIELD) :].strip()
        if not payload or payload == STREAM_END:
            continue
        try:
            found.append(json.loads(payload))
        except (ValueError, UnicodeDecodeError):
            continue
    return found


def _first_choice(data: Any) -> dict[str, Any] | None:
    if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
        return None
    for choice in data["choices"]:
        if isinstance(choice, dict) and choice.get("index", 0) == 0:
            return choice
    return None
