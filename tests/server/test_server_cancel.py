"""A cancelled call, and a server that goes away mid-call, leave no sandboxed process behind.

Driven over a real stdio session with the official SDK client: cancelling the awaiting task
makes the client send `notifications/cancelled`. The call's program starts a tree (children,
a grandchild that left the session with a forged marker); every member runs `sleep` with a
length unique to the test, which is how the test finds survivors.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from process_helpers import processes_running, unique_sleep, wait_until_gone
from server_helpers import capy_session

pytestmark = pytest.mark.anyio


@pytest.fixture
def sleep_tag() -> Iterator[str]:
    with unique_sleep() as tag:
        yield tag


def _tree(tag: str) -> str:
    return (
        f"sleep {tag} & sleep {tag} & "
        f"(CAPY_SANDBOX_ID=forged setsid sleep {tag} >/dev/null 2>&1 &) ; "
        f"sleep {tag}"
    )


async def _wait_for(tag: str, count: int) -> None:
    with anyio.fail_after(30):
        while len(processes_running(tag)) < count:
            await anyio.sleep(0.05)


def _call(tag: str) -> dict:
    return {"language": "shell", "code": _tree(tag), "timeout": 120}


async def test_a_cancelled_call_ends_its_whole_process_tree(
    project_dir: Path, server_home: Path, sleep_tag: str
) -> None:
    async with capy_session(project_dir, server_home) as client:
        async with anyio.create_task_group() as group:
            with anyio.CancelScope() as scope:
                group.start_soon(client.call_tool, "capy_execute", _call(sleep_tag))
                await _wait_for(sleep_tag, 4)
                started = time.monotonic()
                scope.cancel()
            group.cancel_scope.cancel()
        survivors = await anyio.to_thread.run_sync(wait_until_gone, sleep_tag, 5.0)
        assert survivors == [], "the cancelled call's processes kept running"
        assert time.monotonic() - started < 5
        # The server is still fine: the next call runs.
        result = await client.call_tool("capy_execute", {"language": "shell", "code": "echo ok"})
        assert not result.is_error


async def test_closing_the_server_mid_call_ends_the_call(
    project_dir: Path, server_home: Path, sleep_tag: str
) -> None:
    # Leaving the session closes the server's stdin (and signals it if it lingers).
    async with anyio.create_task_group() as group, capy_session(project_dir, server_home) as client:
        group.start_soon(client.call_tool, "capy_execute", _call(sleep_tag))
        await _wait_for(sleep_tag, 4)
        group.cancel_scope.cancel()
    survivors = await anyio.to_thread.run_sync(wait_until_gone, sleep_tag, 10.0)
    assert survivors == [], "the call outlived the server"


def _server_of(pid: int) -> int:
    """The `capy serve` process above a sandboxed process."""
    while pid > 1:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if b"serve" in cmdline and b"capy" in cmdline:
            return pid
        pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    raise AssertionError("no capy serve process above the call")


async def test_sigterm_to_the_server_mid_call_ends_the_call(
    project_dir: Path, server_home: Path, sleep_tag: str
) -> None:
    async with anyio.create_task_group() as group, capy_session(project_dir, server_home) as client:

        async def call() -> None:
            # The server dies under the call: the client's error is the expected outcome.
            try:
                await client.call_tool("capy_execute", _call(sleep_tag))
            except Exception:
                return

        group.start_soon(call)
        await _wait_for(sleep_tag, 4)
        os.kill(_server_of(processes_running(sleep_tag)[0]), signal.SIGTERM)
        survivors = await anyio.to_thread.run_sync(wait_until_gone, sleep_tag, 10.0)
        group.cancel_scope.cancel()
    assert survivors == [], "the call outlived a SIGTERM to the server"
