"""What every capy tool gives back: the text the agent reads, and what it cost to produce."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ToolReply:
    """One tool call's answer.

    `text` is exactly what the agent receives (markdown). `processed_bytes` is how much raw data
    the call handled on the agent's behalf (program output, fetched pages, indexed content); the
    difference between the two is what capy kept out of the context window.
    """

    text: str
    processed_bytes: int = 0
    is_error: bool = False
    cache_hits: int = 0
    # The same facts as JSON, for clients that read structured results (capy_stats).
    data: dict[str, Any] | None = None
    # A protocol answer for the host, not text for the agent (capy_hook's hook JSON, exactly
    # what `capy hook` prints): passed on as is, since redacting a rewritten command in it
    # would break the command. Every other reply is redacted on its way out.
    for_host: bool = False

    @property
    def returned_bytes(self) -> int:
        return len(self.text.encode("utf-8"))


class ToolInputError(ValueError):
    """The caller asked for something capy cannot do; the message says what to do instead."""
