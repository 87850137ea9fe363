"""Finding a test's sandboxed processes by a fingerprint they cannot shed, and killing them.

Shared by the executor and server tests. An escapee can wipe or forge the marker variable, so
the tests give it a `sleep` length no other process uses and look for that on command lines.
"""

from __future__ import annotations

import os
import secrets
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def processes_running(fingerprint: str) -> list[int]:
    """Live processes whose argv holds `fingerprint` as one argument (zombies have none)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if fingerprint.encode() in argv:
            found.append(int(entry.name))
    return found


def wait_until_gone(fingerprint: str, seconds: float) -> list[int]:
    """Poll until nothing runs with `fingerprint` or `seconds` pass; what still runs."""
    deadline = time.monotonic() + seconds
    while (running := processes_running(fingerprint)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return running


@contextmanager
def unique_sleep() -> Iterator[str]:
    """A sleep length no other process uses; whatever runs with it is killed afterwards."""
    tag = f"{300 + secrets.randbelow(10_000)}.{secrets.randbelow(10**6):06d}"
    try:
        yield tag
    finally:
        for pid in processes_running(tag):
            os.kill(pid, signal.SIGKILL)
