"""Escape attempts that end early: an MCP call cancelled, or its server gone, mid-call.

The call is a long capy_execute (it lingers well past the moment it is ended) whose code has
started a tagged survivor first. Once the survivor's pid file is there the call is ended one of
three ways, each through a real `capy serve` driven by the official SDK client:

- "cancelled": the task awaiting `call_tool` is cancelled, so the SDK sends the server
  `notifications/cancelled` for the request (its courtesy cancel on abandon);
- "client-gone": the client leaves while the call runs, so the server reads end of file;
- "SIGTERM": the server process is sent SIGTERM.

A survivor alive a short grace later counts (survived the call), and again once the server has
exited. SIGKILL is not tried: nothing inside a killed process can clean up after it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from capy.bench.hostile_common import Scratch, mcp_session

GRACE = 1.0  # seconds after the call ended: what "a short grace later" means here
PID_WAIT = 10.0  # a cold sandbox start under load


def via_cancel(scratch: Scratch, planned: list) -> None:
    import anyio

    anyio.run(_cancelled_calls, scratch, planned)
    _after_exit(planned)


def via_client_gone(scratch: Scratch, planned: list) -> None:
    import anyio

    anyio.run(_ended_by, scratch, planned, _leave)
    _after_exit(planned)


def via_sigterm(scratch: Scratch, planned: list) -> None:
    import anyio

    anyio.run(_ended_by, scratch, planned, _terminate_server)
    _after_exit(planned)


async def _cancelled_calls(scratch: Scratch, planned: list) -> None:
    import anyio

    async with mcp_session(scratch) as client:
        await _warm_up(client)
        for planted, language, code in planned:
            async with anyio.create_task_group() as group:
                group.start_soon(_call, client, planted, language, code)
                await _wait_for_pid(planted)
                group.cancel_scope.cancel()  # the SDK sends notifications/cancelled
            await anyio.sleep(GRACE)
            planted.after_call = planted.alive()


async def _ended_by(scratch: Scratch, planned: list, end) -> None:
    """Every call at once in one server, ended by `end(scratch)` once their survivors are up."""
    import anyio

    async with anyio.create_task_group() as group:
        async with mcp_session(scratch) as client:
            await _warm_up(client)
            for planted, language, code in planned:
                group.start_soon(_call, client, planted, language, code)
            for planted, _, _ in planned:
                await _wait_for_pid(planted)
            await end(scratch)
        # The session is closed; the pending calls end with it (no cancel is sent for them).
        group.cancel_scope.cancel()
    await anyio.sleep(GRACE)
    for planted, _, _ in planned:
        planted.after_call = planted.alive()


async def _warm_up(client) -> None:
    """A first call pays the server's cold start (seconds under load), so the timed ones don't."""
    await client.call_tool("capy_execute", {"language": "shell", "code": "true"})


async def _leave(scratch: Scratch) -> None:
    """Leave the session block: the SDK closes the server's stdin."""


async def _terminate_server(scratch: Scratch) -> None:
    for pid in server_pids(scratch.project):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)


async def _call(client, planted, language: str, code: str) -> None:
    try:
        await client.call_tool("capy_execute", {"language": language, "code": code})
    except Exception as error:  # a call ended early may fail; the attempt still counts
        planted.error = planted.error or f"{type(error).__name__}: {error}"[:200]


async def _wait_for_pid(planted) -> None:
    import anyio

    deadline = time.monotonic() + PID_WAIT
    while planted.pid() is None and time.monotonic() < deadline:
        await anyio.sleep(0.05)


def server_pids(project: Path) -> list[int]:
    """The `capy serve --project PROJECT` processes running now (this scratch's only)."""
    wanted = [b"serve", b"--project", str(project).encode()]
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(argv[i : i + 3] == wanted for i in range(len(argv))):
            found.append(int(entry.name))
    return found


def _after_exit(planned: list) -> None:
    time.sleep(GRACE)
    for planted, _, _ in planned:
        planted.after_exit = planted.alive()
