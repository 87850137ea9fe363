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

    @property
    def returned_bytes(self) -> int:
        return len(self.text.encode("utf-8"))


class ToolInputError(ValueError):
    """The caller asked for something capy cannot do; the message says what to do instead."""
