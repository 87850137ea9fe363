"""The few lines a reply shows of a fetched document: enough to tell what it is and what to
search for, never the document itself."""

from __future__ import annotations

import json

from capy.fetch.document import URL_PREFIX
from capy.rules.views.chunking import ContentType
from capy.rules.views.security import FetchPreview

ELLIPSIS = "…"


def preview_lines(text: str, content_type: str, limits: FetchPreview) -> list[str]:
    if limits.max_lines == 0:
        return []
    if content_type == ContentType.JSON:
        lines = _json_outline(text)
    elif content_type == ContentType.MARKDOWN:
        lines = _headings(text) or _first_lines(text, limits.max_lines)
    else:
        lines = _first_lines(text, limits.max_lines)
    return [clip(line, limits.max_line_chars) for line in lines[: limits.max_lines]]


def clip(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[: limit - 1].rstrip() + ELLIPSIS


def _headings(text: str) -> list[str]:
    """Markdown headings in order, fenced code skipped."""
    found, fenced = [], False
    for line in text.split("\n"):
        if line.startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and line.startswith("#") and line.lstrip("#").startswith(" "):
            found.append(line.strip())
    return found


def _first_lines(text: str, count: int) -> list[str]:
    lines = []
    for line in text.split("\n"):
        if line.strip() and not line.startswith(URL_PREFIX):
            lines.append(line.rstrip())
            if len(lines) == count:
                break
    return lines


def _json_outline(text: str) -> list[str]:
    """Top-level shape: keys of an object, or the length and item keys of an array."""
    try:
        data = json.loads(text)
    except ValueError:
        return _first_lines(text, 3)
    if isinstance(data, dict):
        return [f"object with {len(data)} keys: {', '.join(map(str, data))}"]
    if isinstance(data, list):
        first = data[0] if data else None
        lines = [f"array of {len(data)} items"]
        if isinstance(first, dict):
            lines.append(f"items have keys: {', '.join(map(str, first))}")
        return lines
    return [json.dumps(data)]
