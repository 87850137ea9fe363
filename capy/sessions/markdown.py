"""Keeping transcript text from changing the markdown structure it is embedded in.

A transcript is indexed as markdown with one `##` section per turn-pair chunk. Text a person or
an agent wrote can hold headings (which would cut a turn in two) and code fences left open by a
capped result (which would swallow every turn after it). These helpers neutralise both.
"""

from __future__ import annotations

import re

# The same shapes capy's markdown chunker recognises (capy/chunking/markdown.py).
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^( {0,3})(#{1,6}(?:[ \t]|$))")
_SETEXT = re.compile(r"^( {0,3})(={3,}|-{3,})[ \t]*$")
_BACKTICKS = re.compile(r"`{3,}")


def inert_markdown(text: str) -> str:
    """Escape headings and setext underlines outside code fences; close a fence left open."""
    lines = text.split("\n")
    marker = ""
    for index, line in enumerate(lines):
        if marker:
            stripped = line.strip()
            if stripped.startswith(marker) and set(stripped) == {marker[0]}:
                marker = ""
            continue
        opened = _FENCE.match(line)
        if opened:
            marker = opened.group(1)
            continue
        lines[index] = _SETEXT.sub(r"\1\\\2", _HEADING.sub(r"\1\\\2", line))
    if marker:
        lines.append(marker)
    return "\n".join(lines)


def fenced(text: str, info: str = "") -> str:
    """`text` in a code fence longer than any backtick run inside it, so nothing closes it early."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"
