"""Bytes another process can read by path but no process can change: a sealed memfd.

Any process of the same user (and root) may open `/proc/<pid>/fd/<n>` of capy's files, and a
path in a shared temp dir may be rewritten. A memfd whose write, grow and shrink seals are set
cannot be changed by anyone afterwards, through any descriptor, root's included: the kernel
checks the seals at every write. A writer that got in between `memfd_create` and the seal is
caught by reading the content back once sealed; one that holds a shared writable mapping makes
the seal fail. Either way the caller gets None and must not hand the bytes over this way.
"""

from __future__ import annotations

import contextlib
import os

try:
    import fcntl

    _SEALS = fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL
    _ADD_SEALS: int | None = fcntl.F_ADD_SEALS
except (ImportError, AttributeError):  # not Linux, or a Python built without the constants
    _SEALS, _ADD_SEALS = 0, None


def available() -> bool:
    return _ADD_SEALS is not None and hasattr(os, "memfd_create")


def sealed_file(data: bytes, name: str = "capy") -> int | None:
    """A close-on-exec descriptor of a sealed memfd holding exactly `data`; None if one cannot
    be made or something else wrote to it before the seal (the caller closes the descriptor)."""
    fd = blank(name)
    if fd is None:
        return None
    if fill(fd, data):
        return fd
    with contextlib.suppress(OSError):
        os.close(fd)
    return None


def blank(name: str = "capy") -> int | None:
    """A close-on-exec descriptor of an empty memfd that `fill` can seal later (a reader may
    open it first); None where memfds cannot be sealed."""
    if not available():
        return None
    try:
        return os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    except OSError:
        return None


def fill(fd: int, data: bytes) -> bool:
    """Write `data` into the blank memfd `fd` and seal it: whether it now holds exactly `data`
    (False: something else wrote to it, or it could not be sealed; do not hand it over)."""
    try:
        written = 0
        while written < len(data):
            written += os.pwrite(fd, data[written:], written)
        fcntl.fcntl(fd, _ADD_SEALS, _SEALS)
        return os.fstat(fd).st_size == len(data) and os.pread(fd, len(data) + 1, 0) == data
    except OSError:
        return False
