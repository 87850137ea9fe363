"""What `capy index` and `capy_index` hand the indexer from a file or a stream.

Nothing is read past the retention pack's per-source cap (`size.max_source_bytes`): a file is
read through `capy.userfiles` (regular files only), its head and tail when it is larger and the
pack truncates, and a stream stops one byte past the cap. `kept_note` says what a larger input
lost and how to keep all of it: `split` indexes the input as several sources of at most the cap.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

from capy.rules.views.retention import OversizePolicy, Size
from capy.store.content import OMISSION_MARKER, ContentError
from capy.units import human_bytes
from capy.userfiles import FileTooLargeError, UserFileError, iter_user_file, read_user_file

if TYPE_CHECKING:
    from capy.store.indexing import IndexResult

# Marks where a stream over the cap was cut: what came after was never read.
UNREAD_MARKER = "\n\n[… capy: the rest was not read, past the {cap:,}-byte source cap …]\n\n"
# Redaction can lengthen text (a short secret becomes a longer marker); parts and kept ends
# leave this share of the cap free so the indexer's own cap does not cut them again.
REDACTION_HEADROOM = 64
# Where to end a part: at the last line end in its final quarter, so lines stay whole.
PART_LINE_SEARCH = 4


@dataclass(frozen=True)
class Intake:
    """Content for the indexer and what reading it left out."""

    content: str | bytes
    input_bytes: int | None  # bytes in the input; None for a stream that was not read to its end
    unread_bytes: int = 0  # bytes never read (between the kept ends, or after the head)
    head_bytes: int = 0  # for a stream cut short: the input bytes kept


def read_file_for_index(path: str | os.PathLike[str], size: Size, *, label: str) -> Intake:
    """The file within the cap, or its ends per `size.on_oversize` (raises `ContentError`)."""
    cap = size.max_source_bytes
    ends = size.on_oversize is not OversizePolicy.REJECT
    try:
        read = read_user_file(path, limit=cap, purpose="index", ends=ends)
    except FileTooLargeError as error:
        raise ContentError(_rejected(label, f"{error.size:,} bytes", cap)) from None
    except UserFileError as error:
        raise ContentError(error.message) from None
    if read.complete:
        return Intake(read.head, read.size)
    keep = _kept_bytes(cap, OMISSION_MARKER.format(omitted=read.size, cap=cap))
    head = _whole_head(read.head[: keep - keep // 2])
    if size.on_oversize is OversizePolicy.TRUNCATE_TAIL:
        tail = b""
    else:
        tail = _whole_tail(read.tail[len(read.tail) - keep // 2 :])
    unread = read.size - len(head) - len(tail)
    text = _text(head) + OMISSION_MARKER.format(omitted=unread, cap=cap) + _text(tail)
    return Intake(text, read.size, unread)


def read_stream_for_index(stream: BinaryIO, size: Size, *, label: str) -> Intake:
    """At most the cap of a stream (standard input); a longer one keeps its head."""
    cap = size.max_source_bytes
    data = stream.read(cap + 1)
    if len(data) <= cap:
        return Intake(data, len(data))
    if size.on_oversize is OversizePolicy.REJECT:
        raise ContentError(_rejected(label, "more than that", cap))
    head = _whole_head(data[: _kept_bytes(cap, UNREAD_MARKER.format(cap=cap))])
    text = _text(head) + UNREAD_MARKER.format(cap=cap)
    return Intake(text, None, len(data) - len(head), head_bytes=len(head))


def file_parts(path: str | os.PathLike[str], size: Size) -> Iterator[bytes]:
    """The whole file as parts that each fit the cap, cut at line ends where there are any."""
    try:
        yield from _parts(iter_user_file(path, purpose="index", block=_part_bytes(size)), size)
    except UserFileError as error:
        raise ContentError(error.message) from None


def stream_parts(stream: BinaryIO, size: Size) -> Iterator[bytes]:
    block = _part_bytes(size)
    yield from _parts(iter(lambda: stream.read(block), b""), size)


def part_label(label: str, number: int) -> str:
    return f"{label} (part {number})"


def kept_note(result: IndexResult, intake: Intake, size: Size, *, keep_all: str) -> str | None:
    """One sentence on what a larger input lost and how to keep it all; None if nothing was."""
    dropped = intake.unread_bytes + result.omitted_bytes
    if not dropped:
        return None
    cap = size.max_source_bytes
    if intake.input_bytes is None:
        kept = intake.head_bytes
        what = f"kept the first {_amount(kept)} of the input and did not read the rest"
    else:
        ends = "start" if size.on_oversize is OversizePolicy.TRUNCATE_TAIL else "start and end"
        kept = max(intake.input_bytes - dropped, 0)
        what = (
            f"kept its {ends}, {_amount(kept)} of {_amount(intake.input_bytes)}, and dropped "
            f"{_amount(dropped)}"
        )
    return (
        f"The input is over the {cap:,}-byte source cap (retention pack size.max_source_bytes): "
        f"{what}, marked where it was cut; to keep all of it, {keep_all}, or raise "
        "size.max_source_bytes in a rules overlay."
    )


def _amount(count: int) -> str:
    return f"{human_bytes(count)} ({count:,} bytes)"


def _rejected(label: str, amount: str, cap: int) -> str:
    return (
        f"refusing to index {label!r}: {amount} is over the {cap:,}-byte cap per source "
        "(retention pack size.max_source_bytes, on_oversize: reject); index it in parts "
        "(split) or a smaller part of it"
    )


def _kept_bytes(cap: int, marker: str) -> int:
    return max(cap - len(marker.encode("utf-8")) - cap // REDACTION_HEADROOM, 0)


def _part_bytes(size: Size) -> int:
    cap = size.max_source_bytes
    return max(cap - cap // REDACTION_HEADROOM, 1)


def _parts(blocks: Iterator[bytes], size: Size) -> Iterator[bytes]:
    part_bytes = _part_bytes(size)
    pending = b""
    for block in blocks:
        pending += block
        while len(pending) >= part_bytes:
            cut = _part_end(pending, part_bytes)
            yield pending[:cut]
            pending = pending[cut:]
    if pending:
        yield pending


def _part_end(data: bytes, limit: int) -> int:
    line_end = data.rfind(b"\n", limit - limit // PART_LINE_SEARCH, limit)
    if line_end >= 0:
        return line_end + 1
    return len(_whole_head(data[:limit])) or limit


def _whole_head(data: bytes) -> bytes:
    """`data` without a UTF-8 character cut at its end."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte < 0x80:
            return data
        if byte >= 0xC0:  # a lead byte: keep it only if its sequence is complete
            length = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return data if back >= length else data[:-back]
    return data


def _whole_tail(data: bytes) -> bytes:
    """`data` without UTF-8 continuation bytes at its start (the rest of a cut character)."""
    start = 0
    while start < min(3, len(data)) and 0x80 <= data[start] < 0xC0:
        start += 1
    return data[start:]


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")
