"""The capture spool: an append-only file hooks write capsule records to, drained into the log.

Format: one record per line, each line a record-separator character (RS, 0x1E) then one JSON
object then a newline, as in JSON text sequences (RFC 7464). JSON never holds a raw RS, so a
reader splits on it: a record cut short by a killed writer (a torn line) fails to parse and is
skipped, and the next record, which starts with its own RS, is read whole even if it was
appended right after the torn one.

Appending is lock-free between hooks: each record is one `write` on an `O_APPEND` descriptor.
Writers hold a shared `flock` while they write, and the drainer takes it exclusively only to
rename the spool aside, so a record is either in the renamed file or in the next spool, never
written to a file already read. Files are private to the user (0600). Plain `os` calls only:
a hook pays for every import.
"""

from __future__ import annotations

import fcntl
import os

from capy.leanjson import dumps, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

RECORD_START = b"\x1e"
FORMAT = 1
# Renamed-aside spools waiting to be drained (a crashed drainer's stay until the next one).
DRAINING_INFIX = ".draining-"
_REOPEN_ATTEMPTS = 5


def utc_stamp(seconds: float) -> str:
    """A Unix time in the capsule's canonical spelling (capy.capsules.model.TIME_FORMAT), for a
    record's `created_at`, without the datetime import a hook would pay for."""
    import time

    whole = int(seconds)
    micros = round((seconds - whole) * 1e6)
    if micros >= 1_000_000:
        whole, micros = whole + 1, micros - 1_000_000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{micros:06d}Z"


def encode_record(record: dict[str, Any]) -> bytes:
    return RECORD_START + dumps(record, ensure_ascii=False).encode("utf-8", "replace") + b"\n"


def append_record(path: str, record: dict[str, Any]) -> int:
    """Append one record to the spool at `path` (created 0600); returns the spool's size."""
    line = encode_record({"format": FORMAT, **record})
    for _ in range(_REOPEN_ATTEMPTS):
        fd = _open_for_append(path)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            if _still_the_spool(fd, path):
                os.write(fd, line)
                return os.fstat(fd).st_size
        finally:
            os.close(fd)  # also releases the lock
    raise OSError(f"the capture spool kept moving while being written: {path}")


def _open_for_append(path: str) -> int:
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, flags, 0o600)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        return os.open(path, flags, 0o600)


def _still_the_spool(fd: int, path: str) -> bool:
    """False when a drainer renamed the file aside between our open and our lock."""
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False


def set_aside(path: str) -> str | None:
    """Rename the spool aside for draining (waiting for writers mid-record); None when there is
    no spool. New records go to a fresh spool at `path`."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        if not _still_the_spool(fd, path):
            return None  # another drainer moved it first
        aside = f"{path}{DRAINING_INFIX}{os.getpid()}-{os.stat(path).st_mtime_ns}"
        os.rename(path, aside)
        return aside
    finally:
        os.close(fd)


def spools_aside(path: str) -> list[str]:
    """Every renamed-aside spool of `path`, oldest first (by name: pid and time)."""
    folder, name = os.path.split(path)
    try:
        names = os.listdir(folder or ".")
    except FileNotFoundError:
        return []
    prefix = name + DRAINING_INFIX
    found = [os.path.join(folder, each) for each in names if each.startswith(prefix)]
    return sorted(found, key=lambda each: os.stat(each).st_mtime_ns)


def read_records(data: bytes) -> tuple[list[dict[str, Any]], int]:
    """The whole records in spool bytes, in order, and how many torn ones were skipped."""
    records: list[dict[str, Any]] = []
    torn = 0
    for chunk in data.split(RECORD_START):
        if not chunk.strip():
            continue
        try:
            record = loads(chunk)
        except (ValueError, UnicodeDecodeError):
            torn += 1
            continue
        if isinstance(record, dict) and record.get("format") == FORMAT:
            records.append(record)
        else:
            torn += 1
    return records, torn
