"""Find inside an open session: the messages whose shown text (a message, or a folded result's
summary line and body) holds the words, case-insensitively, and the words marked in them.

It searches what the screen shows (already redacted), not the search index, so a find agrees
with what the reader sees, folded bodies and messages outside the mounted window included."""

from __future__ import annotations

import re
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import Input

from capy.sessions.model import Message, ToolCall
from capy.vault.render import fold_of, message_heading

FOUND_STYLE = "black on yellow"


def shown_text(item: str | Message, calls: dict[str, ToolCall], message_text: Text) -> str:
    """What the session screen shows for an item: a part heading, a message, or a fold's
    title line and body."""
    if isinstance(item, str):
        return item
    fold = fold_of(item, calls)
    if fold is None:
        return message_text.plain
    return f"{message_heading(item)} · {fold.line}\n{fold.body}"


def find_pattern(words: str) -> re.Pattern[str] | None:
    """The words as one phrase, any case, any run of spaces between them; None for nothing."""
    parts = words.split()
    return re.compile(r"\s+".join(map(re.escape, parts)), re.IGNORECASE) if parts else None


def marked(text: Text, pattern: re.Pattern[str] | None) -> Text:
    """A copy of `text` with every match of `pattern` marked."""
    copy = text.copy()
    if pattern is not None:
        copy.highlight_regex(pattern, style=FOUND_STYLE)
    return copy


class FindInput(Input):
    """The find box: Enter goes to the next match, Esc leaves it for the messages."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave", "Close find", show=False),
    ]

    def action_leave(self) -> None:
        self.screen.action_close_find()  # type: ignore[attr-defined]
