"""A line of text cut to a width with an ellipsis: chunk titles as indexed, and as a hit shows
them."""

from __future__ import annotations


def clip_line(text: str, max_chars: int, ellipsis: str) -> str:
    """Whitespace folded to single spaces, then cut to `max_chars` (the ellipsis included)."""
    text = " ".join(text.split())
    if len(text) <= max_chars:
        return text
    return text[: max(max_chars - len(ellipsis), 1)].rstrip() + ellipsis
