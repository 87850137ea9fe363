"""A command run in a folder deleted under the shell gets one sentence, not "internal error"."""

from __future__ import annotations

import subprocess
import sys

import pytest

from capy.config.paths import CWD_GONE


def _in_deleted_folder(tmp_path, *args: str, stdin: bytes | None = None):
    gone = tmp_path / "gone"
    gone.mkdir()
    script = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
    return subprocess.run(
        ["sh", "-c", script, "sh", str(gone), sys.executable, "-m", "capy", *args],
        input=stdin,
        capture_output=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize("args", [("stats",), ("which",), ("search", "anything")])
def test_a_command_in_a_deleted_folder_says_so(tmp_path, warm_rules, args) -> None:
    done = _in_deleted_folder(tmp_path, *args)
    stderr = done.stderr.decode()
    assert done.returncode == 2, stderr
    assert CWD_GONE in stderr and "internal error" not in stderr and "Traceback" not in stderr


def test_a_hook_in_a_deleted_folder_passes_through_saying_why(tmp_path, warm_rules) -> None:
    done = _in_deleted_folder(tmp_path, "hook", "PreToolUse", stdin=b"{}")
    assert done.returncode == 0 and done.stdout == b""
    assert CWD_GONE in done.stderr.decode() and "internal error" not in done.stderr.decode()
