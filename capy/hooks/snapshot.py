"""The PreCompact snapshot: the session's events by priority, within a hard byte budget."""

from __future__ import annotations

from capy.hooks.events import printable
from capy.hooks.routing import render

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def build_snapshot(precompact: dict[str, Any], session_id: str, state: dict[str, Any]) -> str:
    """Header, then each category in priority order, newest events first, cut to fit."""
    budget = precompact["budget_bytes"]
    header = render(
        precompact["header"], session_id=session_id, event_count=str(state.get("event_count", 0))
    )
    lines = [header.strip()]
    used = _size(lines[0])
    events = state.get("events", {})
    for priority in precompact["priorities"]:
        kept = events.get(priority["category"], [])[-priority["max_items"] :]
        if not kept:
            continue
        section = [f"## {priority['category']}"]
        for item in reversed(kept):
            # printable again: a state written before events were escaped may hold raw controls.
            text = printable(item.get("text", ""))
            section.append("- " + _cut(text, priority["max_chars_each"]))
        for index, line in enumerate(section):
            if used + _size(line) + 1 > budget:
                section = section[:index]
                break
            used += _size(line) + 1
        if len(section) > 1:
            lines.extend(section)
        else:
            # Not even one item of this category fits; later ones are smaller only by chance.
            used -= sum(_size(line) + 1 for line in section)
    return "\n".join(lines)


def fit_bytes(text: str, limit: int) -> str:
    """Whole lines of `text` up to `limit` UTF-8 bytes (a cut line would read as a lie)."""
    if _size(text) <= limit:
        return text
    kept, used = [], 0
    for line in text.splitlines():
        if used + _size(line) + 1 > limit:
            break
        kept.append(line)
        used += _size(line) + 1
    return "\n".join(kept)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _size(text: str) -> int:
    return len(text.encode("utf-8"))
