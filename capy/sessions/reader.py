"""Reading a JSONL transcript leniently: every line kept, malformed ones counted, never fatal."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from capy.sessions.model import Message, ParseReport, Session

# What `json.loads` raises on a line it cannot turn into data: bad JSON (ValueError) or JSON
# nested deeper than the interpreter's recursion limit (RecursionError). Either costs one line.
UNPARSABLE_LINE = (ValueError, RecursionError)


def read_raw_lines(path: Path, max_bytes: int | None = None) -> tuple[list[str], bool]:
    """The file's lines (without line ends) and whether `max_bytes` cut it short.

    A cut never splits a line: the partial last line is dropped. Undecodable bytes become
    U+FFFD, so one bad byte costs one line, not the file.
    """
    with path.open("rb") as handle:
        data = handle.read(max_bytes + 1 if max_bytes else -1)
    truncated = bool(max_bytes) and len(data) > max_bytes
    if truncated:
        data = data[: data.rfind(b"\n", 0, max_bytes) + 1]
    text = data.decode("utf-8", errors="replace")
    return text.splitlines(), truncated


def json_records(raw_lines: list[str], report: ParseReport) -> Iterator[tuple[int, dict[str, Any]]]:
    """(1-based line number, object) for each line that is a JSON object; the rest counted."""
    for number, line in enumerate(raw_lines, 1):
        report.lines += 1
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except UNPARSABLE_LINE:
            record = None
        if isinstance(record, dict):
            yield number, record
        else:
            report.malformed.append(number)


def first_record(path: Path, max_lines: int = 20) -> dict[str, Any] | None:
    """The first JSON-object line of a file, to tell its format; None when there is none."""
    try:
        with path.open("rb") as handle:
            for _, line in zip(range(max_lines), handle, strict=False):
                try:
                    record = json.loads(line)
                except UNPARSABLE_LINE:
                    continue
                if isinstance(record, dict):
                    return record
    except OSError:
        return None
    return None


def text_field(value: Any) -> str:
    """A record's field when it is a string; anything else (absent, null, a number) is ''."""
    return value if isinstance(value, str) else ""


class MessageLog:
    """What both parsers share: appending a message to the session, stamped with its line."""

    # The record field that identifies a message given no id of its own (None: no such field).
    RECORD_ID_FIELD: str | None = None

    def __init__(self, session: Session) -> None:
        self.session = session

    def _append(
        self,
        role: str,
        kind: str,
        text: str,
        number: int,
        record: dict[str, Any],
        message_id: str | None = None,
    ) -> Message:
        message = Message(
            role=role,  # type: ignore[arg-type]
            kind=kind,  # type: ignore[arg-type]
            text=text,
            timestamp=text_field(record.get("timestamp")) or None,
            message_id=message_id or self._record_id(record),
            line_numbers=[number],
        )
        self.session.messages.append(message)
        return message

    def _record_id(self, record: dict[str, Any]) -> str | None:
        if self.RECORD_ID_FIELD is None:
            return None
        return text_field(record.get(self.RECORD_ID_FIELD)) or None
