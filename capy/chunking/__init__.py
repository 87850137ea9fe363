"""Cut raw content (command output, pages, files, transcripts) into titled, size-bounded chunks.

Every constant comes from the chunking pack. Guarantees, whatever the input:
- every chunk's content is at most `max_chunk_bytes` UTF-8 bytes, and no chunk is empty;
- every non-blank input line appears in some chunk (a line longer than a chunk is cut into
  consecutive pieces), except HTML, where the pack's dropped elements are removed on purpose;
- titles are clipped to `titles.max_chars`;
- nothing raises except ValueError for an unknown content type.
Line endings are normalised to `\\n` and a leading byte-order mark is dropped.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from capy.chunking.code import chunk_code
from capy.chunking.diff import chunk_diff
from capy.chunking.hints import content_type_from_label, language_from_label
from capy.chunking.html import html_to_text
from capy.chunking.json_chunks import chunk_json
from capy.chunking.log import chunk_log
from capy.chunking.markdown import chunk_markdown
from capy.chunking.pieces import Piece, bounded, fallback_title
from capy.chunking.tables import chunk_csv
from capy.chunking.text import chunk_plaintext
from capy.chunking.transcript import chunk_transcript
from capy.rules.views.chunking import ChunkingPack, ContentType

__all__ = ["AUTO", "Chunk", "chunk_text", "detect_content_type"]

AUTO = "auto"


@dataclass(frozen=True)
class Chunk:
    title: str  # heading path / JSON key path / log error line / definition name; clipped
    content: str  # the chunk's text


def detect_content_type(text: str, rules: ChunkingPack, *, label: str = "") -> str:
    """The content type (a ContentType value) `chunk_text` would use for content_type="auto":
    the label's file extension when it names a format, else the pack's detection rules."""
    return _resolve(AUTO, _normalise(text), label if isinstance(label, str) else "", rules).value


def chunk_text(
    text: str, *, content_type: str = AUTO, label: str = "", rules: ChunkingPack
) -> list[Chunk]:
    """Chunks of `text`; `label` (a file name, a command) helps detection and titles.

    Raises ValueError when content_type is neither "auto" nor a ContentType value.
    """
    text = _normalise(text)
    label = label if isinstance(label, str) else str(label)
    kind = _resolve(content_type, text, label, rules)
    if not text.strip():
        return []
    return _finalise(_chunk(kind, text, label, rules), label, rules)


def _normalise(text: str | bytes) -> str:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    elif not isinstance(text, str):
        text = str(text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.removeprefix("\ufeff")


def _resolve(content_type: str, text: str, label: str, rules: ChunkingPack) -> ContentType:
    requested = str(content_type).strip().lower()
    if requested == AUTO:
        hinted = content_type_from_label(label, rules)
        return ContentType(hinted) if hinted else rules.detection.detect(text)
    try:
        return ContentType(requested)
    except ValueError:
        names = ", ".join([AUTO, *(kind.value for kind in ContentType)])
        raise ValueError(f"unknown content type {content_type!r}; use one of: {names}") from None


def _chunk(kind: ContentType, text: str, label: str, rules: ChunkingPack) -> list[Piece]:
    if kind is ContentType.JSON:
        pieces = chunk_json(text, label, rules)
        if pieces is not None:
            return pieces
        # JSON Lines are records, one per line, most often events: chunk them as a log.
        return (chunk_log if _json_lines(text) else chunk_plaintext)(text, label, rules)
    if kind is ContentType.HTML:
        converted = html_to_text(text, rules)
        target = rules.html.convert_to
        if converted is None or target is ContentType.HTML:
            return chunk_plaintext(text, label, rules)
        return _chunk(target, converted, label, rules) if converted.strip() else []
    if kind is ContentType.CODE:
        return chunk_code(text, label, rules, language_from_label(label, rules))
    return _CHUNKERS.get(kind, chunk_plaintext)(text, label, rules)


_CHUNKERS: dict[ContentType, Callable[[str, str, ChunkingPack], list[Piece]]] = {
    ContentType.MARKDOWN: chunk_markdown,
    ContentType.PLAINTEXT: chunk_plaintext,
    ContentType.LOG: chunk_log,
    ContentType.CSV: chunk_csv,
    ContentType.DIFF: chunk_diff,
    ContentType.TRANSCRIPT: chunk_transcript,
}


def _json_lines(text: str) -> bool:
    """At least two lines, and each of the first few non-blank ones a JSON object or array."""
    head = [line for line in text.split("\n", 64)[:64] if line.strip()]
    if len(head) < 2:
        return False
    try:
        return all(isinstance(json.loads(line), (dict, list)) for line in head[:-1])
    except (ValueError, RecursionError):
        return False


def _finalise(pieces: list[Piece], label: str, rules: ChunkingPack) -> list[Chunk]:
    chunks: list[Chunk] = []
    for piece in bounded(pieces, rules):
        content = _trim_blank_lines(piece.content)
        if not content.strip():
            continue
        title = piece.title
        if not title:
            title = (
                fallback_title(rules, label, *piece.span)
                if piece.span
                else " ".join(label.split()) or rules.titles.fallback
            )
        chunks.append(Chunk(title=rules.titles.clip(title), content=content))
    return chunks


def _trim_blank_lines(content: str) -> str:
    """Drop blank lines at either end, keeping the first line's indentation (code, man pages)."""
    lines = content.split("\n")
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return "\n".join(lines[start:end]) if (start, end) != (0, len(lines)) else content
