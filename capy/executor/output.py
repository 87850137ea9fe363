"""What comes back to the agent: decoded text, and long output cut to its head and tail."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from capy.rules.views.executor import Output


@dataclass(frozen=True)
class Decoded:
    text: str
    # Invalid UTF-8 was replaced with U+FFFD; `binary` also when NUL bytes suggest a binary file.
    invalid_utf8: bool
    binary: bool


def decode(data: bytes) -> Decoded:
    try:
        text = data.decode("utf-8")
        invalid = False
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        invalid = True
    return Decoded(text, invalid, invalid or b"\0" in data)


@dataclass(frozen=True)
class Truncated:
    head: bytes
    tail: bytes
    omitted_bytes: int
    omitted_lines: int


def split_head_tail(data: bytes, limits: Output) -> Truncated | None:
    """Keep `head_bytes` from the start and `tail_bytes` from the end, at line boundaries.

    None when everything fits. A head or tail with no line break in range is cut mid-line (at a
    UTF-8 character boundary), since dropping it whole could lose the only line there is.
    """
    if len(data) <= limits.max_returned_bytes:
        return None
    head = data[: limits.head_bytes]
    tail = data[len(data) - limits.tail_bytes :] if limits.tail_bytes else b""
    if limits.cut_at_line_boundary:
        newline = head.rfind(b"\n")
        if newline >= 0:
            head = head[: newline + 1]
        newline = tail.find(b"\n")
        if 0 <= newline < len(tail) - 1:
            tail = tail[newline + 1 :]
    head = _back_to_char_start(head, at_end=True)
    tail = _back_to_char_start(tail, at_end=False)
    omitted = data[len(head) : len(data) - len(tail)]
    return Truncated(head, tail, len(omitted), omitted.count(b"\n"))


def _back_to_char_start(chunk: bytes, *, at_end: bool) -> bytes:
    """Never split a UTF-8 sequence: trim continuation bytes at the cut."""
    if at_end:
        end = len(chunk)
        for back in range(1, min(4, end) + 1):
            byte = chunk[end - back]
            if byte < 0x80:
                return chunk
            if byte >= 0xC0:  # a lead byte: complete if its sequence fits
                need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
                return chunk if back >= need else chunk[: end - back]
        return chunk
    start = 0
    while start < min(4, len(chunk)) and 0x80 <= chunk[start] < 0xC0:
        start += 1
    return chunk[start:]


def returned_text(
    data: bytes, limits: Output, *, prepare: Callable[[str], str] | None = None
) -> tuple[str, int]:
    """The text for the agent and how many bytes were cut from it.

    `prepare` (the caller's redaction, say) sees the whole text before a long one is cut: a
    cut can fall inside something only whole text shows for what it is (a PEM key's END line
    without its BEGIN is just base64), and the head and tail are cut from what it returns, so
    the counts in the marker are of that text. Output that fits is returned as is: the caller
    sees it whole anyway, and 1 MB of redaction is paid only when there was a cut.
    """
    if prepare is not None and len(data) > limits.max_returned_bytes:
        data = prepare(decode(data).text).encode("utf-8")
    cut = split_head_tail(data, limits)
    if cut is None:
        return decode(data).text, 0
    marker = limits.marker(cut.omitted_bytes, cut.omitted_lines)
    text = decode(cut.head).text + marker + decode(cut.tail).text
    return text, cut.omitted_bytes
