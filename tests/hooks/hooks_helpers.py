"""Helpers for the hook tests: golden payloads and real `capy hook` processes.

A module of its own (not conftest): several test folders have a conftest.py, and importing
one by that name would find whichever was loaded first.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PAYLOADS = Path(__file__).parent / "payloads"


def payload_files() -> list[Path]:
    return sorted(PAYLOADS.glob("*/*.json"))


def load_payload(path: Path, project: Path) -> bytes:
    return path.read_text(encoding="utf-8").replace("$CWD", str(project)).encode()


def native_event(path: Path) -> str:
    """`PreToolUse-bash-curl.json` -> `PreToolUse`; OpenCode names contain dots, not dashes."""
    return path.stem.split("-")[0]


def hook_command(event: str, platform: str) -> list[str]:
    script = Path(sys.executable).with_name("capy")
    if script.is_file():
        return [str(script), "hook", "--platform", platform, event]
    entry = "import sys; from capy.entry import run; sys.exit(run())"
    return [sys.executable, "-c", entry, "hook", "--platform", platform, event]


def run_hook_process(event: str, payload: bytes, platform: str, cwd: Path):
    return subprocess.run(
        hook_command(event, platform), input=payload, capture_output=True, cwd=cwd, timeout=120
    )


def shown(outcome, project: Path) -> dict:
    """What a user sees of an outcome, with the private project path made stable."""
    stdout = outcome.stdout if isinstance(outcome.stdout, str) else outcome.stdout.decode()
    stderr = outcome.stderr if isinstance(outcome.stderr, str) else outcome.stderr.decode()
    exit_code = getattr(outcome, "exit_code", getattr(outcome, "returncode", None))
    stdout = stdout.replace(str(project), "$CWD")
    try:
        body = json.loads(stdout) if stdout.strip() else None
    except ValueError:
        body = stdout
    return {"exit_code": exit_code, "stdout": body, "stderr": stderr.replace(str(project), "$CWD")}


def wait_for_saved_sessions(timeout: float = 60) -> None:
    """Wait until the drainer a PreCompact or SessionEnd started has saved every session
    record (capy.hooks.ended_sessions) to the knowledge base."""
    import time

    from capy.config.paths import data_dir
    from capy.hooks.ended_sessions import RECORDS

    sessions = data_dir() / "hooks" / "sessions"

    def waiting() -> list[Path]:
        found = sessions.iterdir() if sessions.is_dir() else []
        return [path for path in found if path.name.endswith(RECORDS)]

    deadline = time.monotonic() + timeout
    while waiting() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not waiting(), "no drainer saved the session records"
