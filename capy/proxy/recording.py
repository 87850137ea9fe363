"""What one chat exchange becomes: a spool record for each message not recorded before and one
for the reply, each redacted and bounded before it is written anywhere.

An `Exchange` is what the server hands over once a reply has been relayed: the request body
as the client sent it and the reply's bytes. Nothing of the request's headers is in it, so no
API key can reach a record.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from capy.proxy.messages import chain, conversation_id, message_text, reply_fingerprint
from capy.proxy.replies import reply_from_json, reply_from_stream
from capy.spooling import utc_stamp

if TYPE_CHECKING:
    from collections.abc import Callable

    from capy.rules.views.capsules import CapsulesPack

PROXY_SOURCE = "proxy"
# Kept of the model name a request gives (it is the client's text, stored as metadata).
MODEL_CHARS = 200


@dataclass
class Exchange:
    request: bytes
    received_at: float = field(default_factory=time.time)
    reply: list[bytes] = field(default_factory=list)
    streamed: bool = False
    replied_at: float = 0.0


@dataclass(frozen=True)
class Planned:
    fingerprint: str
    record: dict[str, Any]


def plan_records(
    exchange: Exchange,
    pack: CapsulesPack,
    project: str,
    redact: Callable[[str], str],
    known: Callable[[set[str]], set[str]],
) -> list[Planned]:
    """The records of an exchange's new messages, request messages first, then the reply;
    `known` tells which fingerprints were recorded already. Only new messages are redacted:
    a long history is resent every turn, and redacting it all again would be most of the
    work."""
    from capy.hooks.events import printable
    from capy.masking import bounded_redaction

    proxy = pack.proxy
    try:
        request = json.loads(exchange.request)
    except (ValueError, UnicodeDecodeError):
        return []
    messages = request.get("messages") if isinstance(request, dict) else None
    if proxy is None or not isinstance(messages, list):
        return []
    history = chain(messages, proxy.shared_roles)
    if not history:
        return []
    reply = (
        reply_from_stream(exchange.reply)
        if exchange.streamed
        else reply_from_json(b"".join(exchange.reply))
    )
    model = request.get("model")
    common = {
        "session_id": conversation_id(history),
        "model": str(model)[:MODEL_CHARS] if isinstance(model, str) and model else None,
    }
    margin = pack.capture.redaction_margin_chars if pack.capture else 8192

    def planned(message: dict[str, Any], fingerprint: str, at: float) -> Planned | None:
        role = str(message.get("role") or "")
        kind = proxy.roles.get(role)
        if kind not in pack.kinds or kind not in proxy.bounds:
            return None
        text = message_text(message, proxy.non_text_part)
        if not text.strip():
            return None
        content = printable(bounded_redaction(text, proxy.bounds[kind], margin, redact))
        metadata = {**common, "fingerprint": fingerprint, "role": role}
        call_id = message.get("tool_call_id")
        if isinstance(call_id, str) and call_id:
            metadata["tool_use_id"] = redact(call_id)
        record = {
            "project": project,
            "source": PROXY_SOURCE,
            "kind": kind,
            "content": content,
            "metadata": {key: value for key, value in metadata.items() if value},
            "created_at": utc_stamp(at),
        }
        return Planned(fingerprint, record)

    candidates = [
        (each.message, each.fingerprint, exchange.received_at + index * 1e-6)
        for index, each in enumerate(history)
    ]
    if reply is not None:
        candidates.append((reply, reply_fingerprint(history, reply), exchange.replied_at))
    seen = known({fingerprint for _, fingerprint, _ in candidates})
    found = []
    for message, fingerprint, at in candidates:
        if fingerprint in seen:
            continue
        seen.add(fingerprint)  # the same message twice in one request is recorded once
        each = planned(message, fingerprint, at)
        if each is not None:
            found.append(each)
    return found
