"""Compact session events: one short line per tool call or prompt, in a category the PreCompact
snapshot ranks (routing pack, `session_events`), newest last, capped per category."""

from __future__ import annotations

import time

from capy.hooks.routing import compiled
from capy.leanjson import dumps
from capy.packregex import glob_matches, pack_regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

USER_PROMPT = "user-prompt"
ERROR = "error"


def describe(value: Any) -> str | None:
    """One line of text for an input value: strings as written, the rest as compact JSON."""
    if value is None or value == "" or value == [] or value == {}:
        return None
    text = value if isinstance(value, str) else dumps(value, ensure_ascii=False)
    return " ".join(text.split())


def categorise(
    config: dict[str, Any], tool: str, tool_input: dict[str, Any]
) -> tuple[str, str] | None:
    """(category, text) for a tool call, from the first entry that applies, or None."""
    for entry in config["categories"]:
        if not any(_tool_matches(pattern, tool) for pattern in entry["tools"]):
            continue
        text = next(
            (found for name in entry["fields"] if (found := describe(tool_input.get(name)))),
            None,
        )
        if text is None:
            continue
        pattern = entry.get("pattern")
        if pattern and not compiled("regex", pattern).search(text):
            continue
        return entry["category"], text
    return None


def failure_text(tool: str | None, tool_input: dict[str, Any], error: str | None) -> str:
    subject = next((describe(value) for value in tool_input.values() if describe(value)), "")
    head = f"{tool or 'tool'} `{subject[:120]}`" if subject else (tool or "a tool call")
    return f"{head} failed: {describe(error) or 'no message'}"


def response_error(response: Any) -> str | None:
    """The error a tool response reports about itself (MCP `isError`, `is_error`), or None."""
    if not isinstance(response, dict):
        return None
    if response.get("isError") or response.get("is_error"):
        return describe(response.get("error") or response.get("content")) or "error"
    return None


def event_entry(config: dict[str, Any], category: str, text: str) -> dict[str, Any]:
    """One event as `capy.hooks.state.append_event` journals it, cut to the pack's size."""
    return {
        "category": category,
        "text": printable(text)[: config["max_chars"]],
        "at": round(time.time(), 3),
        "keep": config["keep_per_category"],
    }


def _tool_matches(pattern: str, tool: str) -> bool:
    return glob_matches(tool, pattern) if "*" in pattern else tool == pattern


def as_markdown(session_id: str, state: dict[str, Any]) -> str:
    """Every kept event, by category, for the knowledge base (searchable, not budgeted)."""
    lines = [f"# Session {session_id}", ""]
    for category, events in sorted(state.get("events", {}).items()):
        lines.append(f"## {category}")
        lines.extend(f"- {printable(item.get('text', ''))}" for item in events)
        lines.append("")
    return "\n".join(lines)


# What must not reach the state, a snapshot or the store as it is: C0 controls (NUL makes the
# indexer refuse the text as binary; ESC starts terminal sequences), DEL, C1 controls, and lone
# surrogates (no UTF-8 form: the state file could not be written).
_UNPRINTABLE = r"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]"


def printable(text: str) -> str:
    """`text` with each unprintable character written as its escape (`\\x00`, `\\ud800`),
    so the event keeps what the command held and stays storable and safe to show."""
    return pack_regex(_UNPRINTABLE).sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
