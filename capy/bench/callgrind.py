"""Instructions a process executes, counted by valgrind's callgrind: a start-up figure that does
not move with the machine's load, where wall time on a shared machine does."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

_COLLECTED = re.compile(rb"Collected\s*:\s*(\d+)")


def available() -> bool:
    return shutil.which("valgrind") is not None


def instructions(argv: list[str], payload: bytes, cwd: Path) -> int | None:
    """The instructions `argv` executes with `payload` on stdin, or None when valgrind is missing
    or reports no count."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None
    command = [valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv]
    done = subprocess.run(command, input=payload, capture_output=True, cwd=cwd, check=False)
    found = _COLLECTED.search(done.stderr)
    return int(found.group(1)) if found else None
