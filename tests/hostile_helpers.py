"""Running capy as a hostile user would, and what every answer to bad input must look like:
no traceback, no "internal error", no hang, the expected exit code, one sentence to act on."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# Long enough for a cold start on a loaded machine, short enough that a hang fails quickly.
RUN_TIMEOUT_SECONDS = 60


@dataclass(frozen=True)
class Run:
    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str


def run_capy(
    *args: str | os.PathLike[str],
    stdin: bytes | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = RUN_TIMEOUT_SECONDS,
) -> Run:
    """`python -m capy ARGS` in a real subprocess; a run past `timeout` fails the test as a hang."""
    command = [sys.executable, "-m", "capy", *map(os.fspath, args)]
    try:
        done = subprocess.run(
            command,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            cwd=cwd,
            env={**os.environ, **(env or {})},
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError(
            f"capy {' '.join(command[3:])} hung for more than {timeout} s"
        ) from None
    return Run(tuple(command[3:]), done.returncode, _text(done.stdout), _text(done.stderr))


def _text(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def assert_clean_refusal(run: Run, *, code: int | tuple[int, ...], says: str | None = None) -> None:
    """The run failed the way a person can act on: the exit code, and a message (on stderr, or
    on stdout for reports such as `capy rules validate`)."""
    assert_no_crash(run)
    codes = code if isinstance(code, tuple) else (code,)
    assert run.code in codes, (run.code, run.stderr)
    said = run.stderr if run.stderr.strip() else run.stdout
    assert said.strip(), f"no message for {run.args}"
    if says is not None:
        assert says.lower() in said.lower(), said


def assert_no_crash(run: Run) -> None:
    for stream in (run.stdout, run.stderr):
        assert "Traceback" not in stream, stream
        assert "internal error" not in stream.lower(), stream
