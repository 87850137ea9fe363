"""The server ends cleanly however its client goes away, and takes its jobs with it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time

import pytest
from server_helpers import capy_session, server_env, text_of


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it has stopped running, which is what matters here.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _wait_gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


def test_exits_when_stdin_closes(project_dir, server_home):
    server = subprocess.Popen(
        [sys.executable, "-m", "capy", "serve", "--project", str(project_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**server_env(server_home), "PATH": os.environ["PATH"]},
    )
    server.stdin.close()
    assert server.wait(timeout=60) == 0
    assert server.stdout.read() == b""


def test_exits_when_its_parent_dies(project_dir, server_home):
    """An agent killed without closing the pipe: the server notices it was re-parented."""
    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    launcher = textwrap.dedent(
        f"""
        import subprocess, sys
        server = subprocess.Popen(
            [sys.executable, "-m", "capy", "serve", "--project", {str(project_dir)!r}],
            stdin={stdin_read}, stdout={stdout_write}, stderr=subprocess.DEVNULL,
        )
        print(server.pid, flush=True)
        sys.stdin.read()  # until the test kills this process
        """
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", launcher],
        pass_fds=(stdin_read, stdout_write),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**server_env(server_home), "PATH": os.environ["PATH"]},
        text=True,
    )
    os.close(stdin_read)
    os.close(stdout_write)
    try:
        pid = int(parent.stdout.readline())
        # Once the server answers, it is running and has noted its parent.
        request = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"},
            },
        }
        os.write(stdin_write, (json.dumps(request) + "\n").encode())
        with os.fdopen(stdout_read, "rb", closefd=False) as answers:
            assert b'"result"' in answers.readline()
        parent.kill()
        parent.wait(timeout=30)
        # stdin stays open (this test holds the write end): only the parent check can end it.
        assert _wait_gone(pid, 60), "the server outlived its parent"
    finally:
        os.close(stdin_write)
        os.close(stdout_read)


@pytest.mark.anyio
async def test_background_jobs_end_with_the_server(project_dir, server_home):
    async with capy_session(project_dir, server_home) as client:
        result = await client.call_tool(
            "capy_execute",
            {
                "language": "shell",
                "code": "echo started; sleep 300",
                "background": True,
                "timeout": 1,
            },
        )
        text = text_of(result)
        assert "started" in text
        pid = int(re.search(r"background as pid (\d+)", text).group(1))
        assert _alive(pid)
    assert _wait_gone(pid, 30), "a background job outlived the server"
