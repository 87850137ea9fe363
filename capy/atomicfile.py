"""Giving a file new content in one step: a reader sees the old bytes or the new, never part.

The content goes first to a temporary file in the same folder (same file system, so the
rename is atomic), created private (0600 unless the caller names another mode) and removed
again if anything fails, so an error (a full disk) or an interrupt leaves no stray temporary
behind; only a kill or a power cut between the two steps can, hidden by its leading dot. With
`durable` the data and then the folder are flushed to disk, for files that must survive a
power cut, not just a crash of capy.

Paths are plain strings (a `Path` is accepted) and temporary names are made by hand: the hooks
use this, and `pathlib` and `tempfile` would cost more to import than the write.
"""

from __future__ import annotations

import os
import time

PRIVATE = 0o600


def write_atomically(
    path: str | os.PathLike[str], content: bytes, *, mode: int = PRIVATE, durable: bool = False
) -> None:
    """Write `content` to a temporary file beside `path`, then rename it over `path`.

    A symbolic link is written through: the temporary file is made beside the file it points
    to and renamed over that, so a settings file kept in a dotfiles folder and linked into
    place gets the new content and stays linked, where a rename over the link replaced it."""
    target = os.path.realpath(path)
    temporary = written_temporary(target, content, mode=mode, durable=durable)
    try:
        os.replace(temporary, target)
    except BaseException:
        unlink_quietly(temporary)
        raise
    if durable:
        sync_folder(os.path.dirname(target) or ".")


def written_temporary(
    path: str | os.PathLike[str], content: bytes, *, mode: int = PRIVATE, durable: bool = False
) -> str:
    """A new file beside `path` holding `content`, for the caller to rename or link into place.
    Its mode is `mode` whatever the umask; on failure nothing is left behind."""
    folder, name = os.path.split(os.fspath(path))
    # pid and clock tell processes apart; the random part, two threads in one clock tick.
    unique = f"{os.getpid()}.{time.monotonic_ns()}.{os.urandom(4).hex()}"
    temporary = os.path.join(folder, f".{name}.{unique}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            os.fchmod(stream.fileno(), mode)  # the umask narrows what open() creates
            stream.write(content)
            if durable:
                stream.flush()
                os.fsync(stream.fileno())
    except BaseException:
        unlink_quietly(temporary)
        raise
    return temporary


def sync_folder(folder: str | os.PathLike[str]) -> None:
    """A rename is durable once its folder is: fsync the folder (POSIX; a no-op elsewhere)."""
    if os.name != "posix":
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def unlink_quietly(path: str | os.PathLike[str]) -> None:
    try:
        os.unlink(path)
    except OSError:
        return
