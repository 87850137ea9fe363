"""Memory's use of a configured chat model: one bounded chat per learning run (calls and
seconds per session from the pack's `llm` section, replies cached in the capsule database by
prompt hash, so `capy memory rebuild` replays them), and the JSON its prompts ask for.
With no model configured there is no chat and memory learns on the no-LLM path alone."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capy.llm.bounded import BoundedChat
    from capy.rules.views.memory import MemoryPack

_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


class CapsuleReplies:
    """The reply cache: the capsule database's `llm_replies` table."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def get(self, prompt_hash: str) -> str | None:
        from capy.capsules.sqlite.summaries import cached_reply

        return cached_reply(self.conn, prompt_hash)

    def put(self, prompt_hash: str, model: str, reply: str) -> None:
        from capy.capsules.sqlite.summaries import keep_reply

        keep_reply(self.conn, prompt_hash, model, reply)


def memory_chat(store: Any, pack: MemoryPack) -> BoundedChat | None:
    """The bounded chat when a chat model is configured, else None (the no-LLM path alone)."""
    from capy.config import load_settings
    from capy.llm import chat_model_from_settings
    from capy.llm.bounded import BoundedChat

    model = chat_model_from_settings(load_settings(store.location.project_root).settings)
    if model is None or pack.llm is None:
        return None
    from dataclasses import replace

    model = replace(model, timeout=min(model.timeout, pack.llm.timeout_seconds))
    return BoundedChat(
        model,
        CapsuleReplies(store.conn),
        max_calls=pack.llm.max_calls_per_session,
        max_seconds=pack.llm.max_seconds_per_session,
    )


def json_object(reply: str) -> dict[str, Any] | None:
    """The JSON object a reply holds, inside a code fence or not; None for anything else."""
    fenced = _FENCE.match(reply)
    text = fenced.group(1) if fenced else reply.strip()
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def one_line(value: Any, limit: int) -> str | None:
    """A reply's string field as one line of at most `limit` characters; None when it is not
    a non-empty string."""
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    return text[:limit] if text else None
