"""Reading and writing agent configuration files without losing what the user wrote.

JSON keeps its key order and the file's own indentation; JSONC (VS Code's mcp.json) is read with
its comments and trailing commas, but a file with comments is never rewritten, since rewriting
would drop them. Every problem is a `SetupError` naming the file, raised before anything is written.
"""

from __future__ import annotations

import json
import re
from typing import Any

_INDENT = re.compile(r"^[{\[][^\n]*\n([ \t]+)\S", re.MULTILINE)
_TRAILING = re.compile(r"\s*[}\]]")


class SetupError(Exception):
    """A configuration file capy cannot safely change; nothing was written."""


def parse_json(text: str, shown: str, *, jsonc: bool = False) -> dict[str, Any]:
    """The file's top-level object; `shown` names the file in errors."""
    source = strip_jsonc(text)[0] if jsonc else text
    if not source.strip():
        return {}
    try:
        data = json.loads(source)
    except json.JSONDecodeError as error:
        raise SetupError(
            f"{shown} is not valid JSON (line {error.lineno}, column {error.colno}: {error.msg}); "
            "fix it or move it aside, then run capy setup again. Nothing was written."
        ) from None
    if not isinstance(data, dict):
        raise SetupError(
            f"{shown} does not hold a JSON object at the top; fix it or move it aside, then run "
            "capy setup again. Nothing was written."
        )
    return data


def has_comments(text: str) -> bool:
    return strip_jsonc(text)[1]


def render_json(data: dict[str, Any], original: str | None) -> str:
    """`data` as JSON in the original file's indentation (two spaces for a new file)."""
    indent: int | str = 2
    if original:
        match = _INDENT.search(original)
        if match:
            found = match.group(1)
            indent = found if "\t" in found else len(found)
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


def strip_jsonc(text: str) -> tuple[str, bool]:
    """JSON text without `//` and `/* */` comments and trailing commas; and whether it had comments.

    A small scanner rather than a regex: comment markers inside strings must stay. The second
    pass catches a trailing comma that only a comment separated from its bracket.
    """
    once, had_comments = _scan(text)
    return _scan(once)[0], had_comments


def _scan(text: str) -> tuple[str, bool]:
    out: list[str] = []
    had_comments = False
    index, length = 0, len(text)
    while index < length:
        char = text[index]
        if char == '"':
            end = _string_end(text, index)
            out.append(text[index:end])
            index = end
        elif text.startswith("//", index):
            had_comments = True
            newline = text.find("\n", index)
            index = length if newline < 0 else newline
        elif text.startswith("/*", index):
            had_comments = True
            close = text.find("*/", index + 2)
            index = length if close < 0 else close + 2
        elif char == "," and _TRAILING.match(text, index + 1):
            index += 1  # a trailing comma before } or ]
        else:
            out.append(char)
            index += 1
    return "".join(out), had_comments


def _string_end(text: str, start: int) -> int:
    index = start + 1
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == '"':
            return index + 1
        index += 1
    return len(text)
