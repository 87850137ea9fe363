"""Transcript text made safe to draw: a terminal reads control characters as commands.

A session's title or a tool's output can hold ESC sequences (set the window title, clear
the screen, move the cursor), NULs or C1 controls; rich passes some of them through to the
terminal. Each one becomes a visible stand-in of one character (the Unicode control
pictures, U+FFFD for C1), so a text keeps its length and a find's match positions hold."""

from __future__ import annotations

from rich.text import Text

# Newlines and tabs lay text out; every other C0 control, DEL and the C1 range is shown.
_STAND_INS = {code: 0x2400 + code for code in range(0x20) if chr(code) not in "\n\t"}
_STAND_INS |= {0x7F: 0x2421} | dict.fromkeys(range(0x80, 0xA0), 0xFFFD)


def printable(text: str) -> str:
    """`text` with each control character replaced by a visible one."""
    return text.translate(_STAND_INS)


def printable_text(text: Text) -> Text:
    """A rich Text with its characters made printable; styles and spans stay where they were."""
    plain = text.plain
    safe = printable(plain)
    if safe == plain:
        return text
    copy = text.copy()
    copy.plain = safe
    return copy
