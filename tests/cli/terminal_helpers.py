"""Run a real `capy` process on a pseudo-terminal, as a person at a terminal would, or piped.

A module of its own (not conftest): several test folders have a conftest.py."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from dataclasses import dataclass


@dataclass(frozen=True)
class Run:
    output: str  # stdout (and, on a terminal, stderr too: both are the terminal)
    exit_code: int


def on_terminal(*args: str, columns: int = 120, **env: str) -> Run:
    """`capy ARGS` with stdin, stdout and stderr on a pty of `columns` columns."""
    environment = {**os.environ, "TERM": "xterm-256color", "COLUMNS": str(columns), **env}
    environment.pop("NO_COLOR", None) if "NO_COLOR" not in env else None
    pid, fd = pty.fork()
    if pid == 0:  # the child: a session leader whose controlling terminal is the pty
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
        os.execve(sys.executable, [sys.executable, "-m", "capy", *args], environment)
    chunks = []
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    text = b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")
    return Run(text, os.waitstatus_to_exitcode(status))


def piped(*args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "capy", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=180,
    )
