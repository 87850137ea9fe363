"""`capy vault list --tui` as a person meets it: a real process in a real pseudo-terminal,
driven by key presses, over a real vault; its exit status and what it wrote to the screen."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

CTRL_F, CTRL_S, ESC, ENTER = b"\x06", b"\x13", b"\x1b", b"\r"
READY = b"msgs"  # the session list's last column header: the browser is drawn


class Terminal:
    """A process on the far side of a pseudo-terminal of `size` (columns, rows)."""

    def __init__(self, argv: list[str], env: dict[str, str], size=(100, 30)) -> None:
        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[1], size[0], 0, 0))
        self.process = subprocess.Popen(
            argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True
        )
        os.close(slave)
        self.screen = bytearray()

    def read(self, seconds: float) -> None:
        """Keep what the process writes for `seconds` (its output must be drained)."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            ready, _, _ = select.select([self.master], [], [], left)
            if not ready:
                continue
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # the process closed the terminal
                return
            if not chunk:
                return
            self.screen += chunk

    def wait_for(self, marker: bytes, seconds: float = 30) -> None:
        end = time.monotonic() + seconds
        while marker not in self.screen and time.monotonic() < end:
            if self.process.poll() is not None:
                break
            self.read(0.2)
        assert marker in self.screen, f"the browser never drew {marker!r}: {self.text()[-800:]}"

    def press(self, key: bytes, settle: float = 0.6) -> None:
        os.write(self.master, key)
        self.read(settle)

    def running(self) -> bool:
        return self.process.poll() is None

    def finish(self, seconds: float = 20) -> int:
        end = time.monotonic() + seconds
        while self.running() and time.monotonic() < end:
            self.read(0.2)
        self.read(0.2)
        if self.running():
            self.process.kill()
            pytest.fail(f"the browser did not exit: {self.text()[-800:]}")
        os.close(self.master)
        return self.process.returncode

    def text(self) -> str:
        return self.screen.decode("utf-8", "replace")


@pytest.fixture
def terminal_env(tmp_path) -> dict[str, str]:
    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "100", "LINES": "30"}
    env.pop("NO_COLOR", None)
    return env


@pytest.fixture
def small_vault(open_test_vault, vault_path, tmp_path, session_writer) -> Path:
    from capy.vault.importer import ImportOptions, import_sessions

    for number in range(3):
        session_writer(tmp_path / "sessions", f"talk-{number}", turns=2, day=number + 1)
    with open_test_vault() as vault:
        import_sessions(vault, ImportOptions(source=tmp_path / "sessions"))
    return vault_path


def browser(vault_path: Path, env: dict[str, str]) -> Terminal:
    argv = [sys.executable, "-m", "capy", "vault", "list", "--tui", "--path", str(vault_path)]
    return Terminal(argv, env)


def test_the_list_screen_keys_keep_the_browser_running_and_q_quits(small_vault, terminal_env):
    term = browser(small_vault, terminal_env)
    term.wait_for(READY)
    for key in (CTRL_F, ESC, CTRL_S, ESC, b"/", ESC, b"s", ESC, b"j", b"k"):
        term.press(key)
        assert term.running(), f"{key!r} ended the browser: {term.text()[-1500:]}"
    term.press(b"q")
    assert term.finish() == 0
    assert "Traceback" not in term.text() and "Error" not in term.text()


def test_resume_restores_the_session_and_runs_its_agent_in_the_terminal(
    small_vault, terminal_env, tmp_path
):
    """U, then Enter on the confirmation: the browser closes, the session's files are back
    where the agent looks, and the agent's resume command runs in this terminal."""
    source = tmp_path / "sessions"
    for transcript in source.glob("*.jsonl"):
        transcript.unlink()
    agent_bin = tmp_path / "bin"
    agent_bin.mkdir()
    record = tmp_path / "agent-ran.txt"
    agent = agent_bin / "claude"  # the platforms pack's resume command for Claude Code
    agent.write_text(f'#!/bin/sh\necho "$@" > {record}\nexit 7\n')
    agent.chmod(0o755)
    env = {**terminal_env, "PATH": f"{agent_bin}{os.pathsep}{terminal_env['PATH']}"}
    term = browser(small_vault, env)
    term.wait_for(READY)
    term.press(b"U")
    assert term.running()
    term.press(ENTER)  # the confirmation's Resume button has the focus
    assert term.finish() == 7  # the agent's own exit status
    assert record.read_text().split() == ["--resume", "talk-2"]  # the newest, at the top
    assert (source / "talk-2.jsonl").is_file()
    assert f"restored: {source / 'talk-2.jsonl'}" in term.text()


def test_a_browser_that_stops_on_an_error_says_so_in_its_exit_status(small_vault, terminal_env):
    """The app's own return code comes back (1 when textual stopped on an error), never a
    0 that tells a script all went well. The error here: a vault closed under the browser."""
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from capy.vault import open_vault\n"
        "from capy.vault.tui import run_tui\n"
        f"vault = open_vault(Path({str(small_vault)!r}))\n"
        "vault.close()\n"
        "sys.exit(10 + run_tui(vault).code)\n"
    )
    term = Terminal([sys.executable, "-c", script], terminal_env)
    assert term.finish(60) == 11, term.text()[-1500:]
