"""The agent's last text of a turn, read from the end of a JSONL transcript.

A transcript grows to megabytes, and the Stop hook runs after every turn: so it reads blocks
backwards from the end, at most the pack's tail size, and parses only lines that can be the
agent's. One message may span several lines (Claude Code writes text, thinking and tool calls
as separate lines under one message id): the text of the last message's lines is joined.
"""

from __future__ import annotations

import os

from capy.leanjson import dumps, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_BLOCK = 65536


def last_assistant_text(
    path: str, tail_bytes: int, shape: dict[str, Any]
) -> tuple[str, str | None] | None:
    """(text, uuid of its line) of the last assistant message with text, or None."""
    role = shape["assistant_role"]
    marker = dumps(role).encode()
    texts: list[str] = []
    message_id: Any = None
    line_uuid: str | None = None
    for line in _lines_backwards(path, tail_bytes):
        if marker not in line:
            if texts:
                break  # the message's lines are contiguous
            continue
        try:
            entry = loads(line)
        except ValueError:
            continue
        message = _message(entry, shape["message_fields"])
        if message is None or message.get("role") != role:
            if texts:
                break
            continue
        text = _text_of(message.get("content"), shape["text_types"])
        if texts and message.get("id") != message_id:
            break
        if text:
            if not texts:
                message_id, line_uuid = message.get("id"), _uuid(entry)
            texts.insert(0, text)
    if not texts:
        return None
    return "\n\n".join(texts), line_uuid


def _lines_backwards(path: str, tail_bytes: int):
    """Complete lines from the end of the file, last first, within `tail_bytes`."""
    with open(path, "rb") as stream:
        end = stream.seek(0, os.SEEK_END)
        start_limit = max(0, end - tail_bytes)
        position = end
        carry = b""
        while position > start_limit:
            size = min(_BLOCK, position - start_limit)
            position -= size
            stream.seek(position)
            block = stream.read(size) + carry
            lines = block.split(b"\n")
            carry = lines[0]  # may continue in the block before
            for line in reversed(lines[1:]):
                if line.strip():
                    yield line
        if position == 0 and carry.strip():
            yield carry  # the file's first line, whole


def _message(entry: Any, fields: list[str]) -> dict[str, Any] | None:
    if not isinstance(entry, dict):
        return None
    for name in fields:
        message = entry.get(name)
        if isinstance(message, dict) and "role" in message:
            return message
    return None


def _text_of(content: Any, text_types: list[str]) -> str:
    if isinstance(content, str):
        return content.strip()
    if not isinstance(content, list):
        return ""
    parts = [
        item["text"]
        for item in content
        if isinstance(item, dict)
        and item.get("type") in text_types
        and isinstance(item.get("text"), str)
    ]
    return "\n\n".join(part.strip() for part in parts if part.strip())


def _uuid(entry: dict[str, Any]) -> str | None:
    value = entry.get("uuid")
    return value if isinstance(value, str) else None
