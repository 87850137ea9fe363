"""Reading a file a user or an agent named: regular files only, and never more than a limit.

A path from outside can name anything: `/dev/zero` (endless), a FIFO (an open that blocks
until a writer comes), `/dev/stdin`, a directory. Every read of a user-named path goes through
`read_user_file`, which opens without blocking, refuses what is not a regular file, and reads
at most `limit + 1` bytes, so a caller learns that a file is larger without ever holding it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

from capy.units import human_bytes

# The most capy reads of a small file a user or a project names (config, settings, key files):
# far above any real one, far below what would hurt.
SMALL_FILE_BYTES = 1024 * 1024
# Bytes per read(2) call: large enough for few calls, small enough that a read past the limit
# costs little.
_READ_BLOCK = 1 << 20


class UserFileError(OSError):
    """A user-named path that cannot be read as asked; `message` is one sentence with a fix,
    `reason` the short why ("no such file") for callers that word their own sentence."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason or message

    def __str__(self) -> str:
        return self.message


class FileTooLargeError(UserFileError):
    """The file holds more than the caller's limit; nothing past the limit was read."""

    def __init__(self, message: str, *, size: int, limit: int) -> None:
        super().__init__(message)
        self.size = size
        self.limit = limit


@dataclass(frozen=True)
class FileContent:
    """What was read: the whole file, or (with `ends`) its head and its tail."""

    head: bytes
    tail: bytes  # empty unless the file was larger than the limit and the ends were asked for
    size: int  # bytes in the file

    @property
    def complete(self) -> bool:
        return not self.skipped

    @property
    def skipped(self) -> int:
        """Bytes between the head and the tail that were never read."""
        return max(self.size - len(self.head) - len(self.tail), 0)


def read_user_file(
    path: str | os.PathLike[str], *, limit: int, purpose: str, ends: bool = False
) -> FileContent:
    """Read at most `limit` bytes of the regular file at `path`.

    A larger file raises `FileTooLargeError`, unless `ends` asks for its first and last bytes
    (`limit` in all, the head the larger half), which is how a truncating size cap keeps the
    command line and the summary of a long log. `purpose` completes messages ("index", "redact").
    """
    name = os.fspath(path)
    descriptor = _open_regular(name, purpose)
    try:
        size = os.fstat(descriptor).st_size
        head = _read_upto(descriptor, limit + 1)
        if len(head) <= limit:
            return FileContent(head, b"", len(head))
        # /proc and other pseudo files report size 0: at least what was read is there.
        size = max(size, len(head))
        if not ends:
            raise FileTooLargeError(
                f"cannot {purpose} {name}: it holds more than {human_bytes(limit)} "
                f"({limit:,} bytes), the most capy reads from one file",
                size=size,
                limit=limit,
            )
        tail_bytes = limit // 2
        head = head[: limit - tail_bytes]
        tail = _read_tail(descriptor, tail_bytes, size, after=len(head))
        return FileContent(head, tail, max(size, len(head) + len(tail)))
    finally:
        os.close(descriptor)


def check_user_file(path: str | os.PathLike[str], *, purpose: str) -> int:
    """The size of the regular file at `path`, for callers whose child process reads it."""
    descriptor = _open_regular(os.fspath(path), purpose)
    try:
        return os.fstat(descriptor).st_size
    finally:
        os.close(descriptor)


def iter_user_file(
    path: str | os.PathLike[str], *, purpose: str, block: int = _READ_BLOCK
) -> Iterator[bytes]:
    """The regular file at `path` in blocks of at most `block` bytes, for callers that keep
    no more than a block or two at a time (indexing a large file as several sources)."""
    name = os.fspath(path)
    descriptor = _open_regular(name, purpose)
    try:
        while chunk := _read_upto(descriptor, block):
            yield chunk
    finally:
        os.close(descriptor)


def _open_regular(name: str, purpose: str) -> int:
    # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        descriptor = os.open(name, flags)
    except OSError as error:
        raise _os_error(name, purpose, error) from None
    try:
        mode = os.fstat(descriptor).st_mode
    except OSError as error:
        os.close(descriptor)
        raise _os_error(name, purpose, error) from None
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        reason = f"it is {_kind_of(mode)}, not a regular file"
        raise UserFileError(
            f"cannot {purpose} {name}: {reason}; give the path of a file (or pipe the content "
            "in where standard input is accepted)",
            reason,
        )
    return descriptor


def _read_upto(descriptor: int, count: int) -> bytes:
    parts: list[bytes] = []
    remaining = count
    while remaining > 0:
        block = os.read(descriptor, min(remaining, _READ_BLOCK))
        if not block:
            break
        parts.append(block)
        remaining -= len(block)
    return b"".join(parts)


def _read_tail(descriptor: int, count: int, size: int, *, after: int) -> bytes:
    """The last `count` bytes, from a seek; never bytes the head already holds."""
    start = max(size - count, after)
    try:
        os.lseek(descriptor, start, os.SEEK_SET)
    except OSError:
        return b""
    return _read_upto(descriptor, count)


def _kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _os_error(name: str, purpose: str, error: OSError) -> UserFileError:
    if isinstance(error, FileNotFoundError):
        reason, fix = "no such file", "check the path"
    elif isinstance(error, IsADirectoryError):
        reason, fix = "it is a directory, not a regular file", "give a file"
    elif isinstance(error, PermissionError):
        reason, fix = "permission denied", "check the file's permissions"
    else:
        reason, fix = (error.strerror or type(error).__name__).lower(), "check the path"
    return UserFileError(f"cannot {purpose} {name}: {reason}; {fix}", reason)
