"""Chat messages as the proxy reads them: their identity (a fingerprint chain per conversation)
and their text (what a capsule keeps).

Clients resend the whole history every turn. A message's fingerprint hashes the message and the
fingerprint of the one before it, so the same words later in another conversation are another
message, and a history resent unchanged has the fingerprints it had: each message is recorded
once. The reply the proxy relays gets the fingerprint its resent copy will have next turn, so
it is not recorded twice either. Messages of the pack's shared roles (a client's system prompt,
the same in every conversation it starts) are recorded once by their text alone.

Only what identifies a message enters its fingerprint (role, text, tool calls, the call it
answers): clients resend an assistant message with fields of their own (`refusal: null`,
annotations), which must not make it new.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from capy.canonical import canonical_json

FINGERPRINT_FORMAT = "capy-proxy-1"
FINGERPRINT_CHARS = 32
CONVERSATION_PREFIX = "proxy-"
CONVERSATION_CHARS = 16


@dataclass(frozen=True)
class ChatMessage:
    """One message of a conversation with its place in the chain."""

    role: str
    fingerprint: str  # what records it once: chained, or by text for shared roles
    chained: str  # the chain's fingerprint at this message
    message: dict[str, Any]


def identity(message: dict[str, Any]) -> dict[str, Any]:
    """What makes a message itself, the same whether it came back from the client or was
    assembled from the upstream's reply."""
    calls = []
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            calls.append([str(function.get("name") or ""), str(function.get("arguments") or "")])
    found = {
        "role": str(message.get("role") or ""),
        "content": _content_identity(message.get("content")),
        "tool_calls": calls,
        "tool_call_id": message.get("tool_call_id") or "",
    }
    return found


def _content_identity(content: Any) -> Any:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        return [
            part.get("text", "")
            if isinstance(part, dict) and part.get("type") == "text"
            else _digest(canonical_json(part))
            for part in content
        ]
    return _digest(canonical_json(content))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def chain(messages: list[Any], shared_roles: tuple[str, ...]) -> list[ChatMessage]:
    """Each message (dicts only) with its fingerprints, in order."""
    previous = FINGERPRINT_FORMAT
    found = []
    for message in messages:
        if not isinstance(message, dict):
            continue
        body = canonical_json(identity(message))
        chained = _digest(f"{previous}\n{body}")[:FINGERPRINT_CHARS]
        role = str(message.get("role") or "")
        own = _digest(f"{FINGERPRINT_FORMAT}:shared\n{body}")[:FINGERPRINT_CHARS]
        found.append(ChatMessage(role, own if role in shared_roles else chained, chained, message))
        previous = chained
    return found


def reply_fingerprint(history: list[ChatMessage], reply: dict[str, Any]) -> str:
    """The fingerprint `reply` will have when the client resends it after `history`."""
    previous = history[-1].chained if history else FINGERPRINT_FORMAT
    body = canonical_json(identity(reply))
    return _digest(f"{previous}\n{body}")[:FINGERPRINT_CHARS]


def conversation_id(history: list[ChatMessage]) -> str:
    """The conversation a request belongs to: the chain at its first user message (the system
    prompt and that message start a conversation; every later turn shares them)."""
    users = [each for each in history if each.role == "user"]
    first = users[0] if users else (history[-1] if history else None)
    anchor = first.chained if first is not None else _digest(FINGERPRINT_FORMAT)
    return CONVERSATION_PREFIX + anchor[:CONVERSATION_CHARS]


def message_text(message: dict[str, Any], non_text_part: str) -> str:
    """What a capsule keeps of a message: its text, a placeholder for each part that is not
    text (images, audio and files are never stored), and its tool calls."""
    content = message.get("content")
    lines: list[str] = []
    if isinstance(content, str):
        lines.append(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and part.get("type") == "text":
                lines.append(str(part.get("text") or ""))
            elif isinstance(part, dict):
                lines.append(non_text_part.format(type=str(part.get("type") or "part")))
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            lines.append(f"call {function.get('name') or '?'}({function.get('arguments') or ''})")
    return "\n".join(line for line in lines if line)
