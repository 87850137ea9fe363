"""The markdown brief: recalled items, each naming its capsule, within a token budget.

Tokens are estimated from characters (the pack's `chars_per_token`, rounded up), and every
piece is measured before it is added, so a brief never exceeds its budget whatever the query,
the items or the budget (a property test holds it to that).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from capy.clip import clip_line

if TYPE_CHECKING:
    from capy.capsules.recall import RecallItem
    from capy.rules.views.capsules import Recall

ELLIPSIS = "…"
ID_CHARS = 12
QUERY_CHARS = 120


def estimate_tokens(text: str, chars_per_token: float) -> int:
    return math.ceil(len(text) / chars_per_token)


def render_brief(
    query: str,
    items: Sequence[RecallItem],
    budget_tokens: int,
    settings: Recall,
    *,
    summary: tuple[str, str] | None = None,  # (session id, summary text)
) -> str:
    """The brief for `items` (best first); `summary` opens it when given."""
    limit = int(budget_tokens * settings.chars_per_token)  # characters the budget allows
    shown_query = clip_line(" ".join(query.split()), QUERY_CHARS, ELLIPSIS)
    if not items:
        return _fit(f"Nothing in the capsule log matched `{shown_query}`.\n", limit)
    parts = [f"## Recalled for `{shown_query}`\n"]
    used = len(parts[0])
    if summary is not None:
        session, text = summary
        block = f"\nSession `{session}` in brief: {' '.join(text.split())}\n"
        room = limit - used
        if room > 80:
            block = _fit(block, room)
            parts.append(block)
            used += len(block)
    shown = 0
    for number, item in enumerate(items[: settings.max_items], 1):
        head = f"\n{number}. {_label(item)}\n"
        room = limit - used - len(head)
        if room < 40:  # not even the start of its text would fit
            break
        body = _fit(_indented(item.text, min(settings.item_chars, room)), room)
        block = head + body
        parts.append(block)
        used += len(block)
        shown += 1
    if shown == 0 and summary is None:
        # Not one item fits: the first one's label still tells the agent where to look.
        return _fit(parts[0] + f"\n1. {_label(items[0])}\n", limit)
    return _fit("".join(parts), limit)


def _label(item: RecallItem) -> str:
    session = f" · session `{item.session_id}`" if item.session_id else ""
    more = f" · +{len(item.folded)} similar" if item.folded else ""
    when = item.created_at[:16].replace("T", " ")
    return f"`{item.capsule_id[:ID_CHARS]}` · {item.kind} · {when}{session}{more}"


def _indented(text: str, chars: int) -> str:
    lines = [line.rstrip() for line in text.strip().splitlines() if line.strip()]
    flat = "\n".join(lines)
    if len(flat) > max(chars, 0):
        flat = flat[: max(chars - len(ELLIPSIS), 0)].rstrip() + ELLIPSIS
    return "".join(f"   {line}\n" for line in flat.splitlines())


def _fit(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters (the last line marked as cut)."""
    if len(text) <= limit:
        return text
    if limit < 2:
        return ""
    return text[: max(limit - len(ELLIPSIS) - 1, 0)].rstrip() + ELLIPSIS + "\n"
