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


def run(scratch: Scratch, planned_by_mode: dict[str, list]) -> None:
    """Each mode ("cancelled", "client-gone", "SIGTERM") in a server and project of its own,
    the three at once: after their warm-up they mostly wait."""
    import anyio

    async def all_modes() -> None:
        async with anyio.create_task_group() as group:
            for mode, planned in planned_by_mode.items():
                project = scratch.root / f"project-{mode}"
                (project / ".git").mkdir(parents=True, exist_ok=True)
                group.start_soon(MODES[mode], scratch, project, planned)

    anyio.run(all_modes)
    time.sleep(GRACE)
    for planned in planned_by_mode.values():
        for planted, _, _ in planned:
            planted.after_exit = planted.alive()


async def _cancelled_calls(scratch: Scratch, project: Path, planned: list) -> None:
    import anyio

    async with mcp_session(scratch, project=project) as client:
        await _warm_up(client)
        for planted, language, code in planned:
            async with anyio.create_task_group() as group:
                group.start_soon(_call, client, planted, language, code)
                await _wait_for_pid(planted)
                group.cancel_scope.cancel()  # the SDK sends notifications/cancelled
            await anyio.sleep(GRACE)
            planted.after_call = planted.alive()


async def _ended_by(scratch: Scratch, project: Path, planned: list, end) -> None:
    """Every call at once in one server, ended by `end(...)` once their survivors are up."""
    import anyio

    async with anyio.create_task_group() as group:
        async with mcp_session(scratch, project=project) as client:
            await _warm_up(client)
            for planted, language, code in planned:
                group.start_soon(_call, client, planted, language, code)
            for planted, _, _ in planned:
                await _wait_for_pid(planted)
            await end(project, planned)
        # The session is closed; the pending calls end with it (no cancel is sent for them).
        group.cancel_scope.cancel()
    await anyio.sleep(GRACE)
    for planted, _, _ in planned:
        planted.after_call = planted.alive()


async def _leave(project: Path, planned: list) -> None:
    """Leave the session block: the SDK closes the server's stdin."""


async def _terminate_server(project: Path, planned: list) -> None:
    pids = server_pids(project)
    if not pids:  # else this mode would quietly be "client-gone" again: say so
        for planted, _, _ in planned:
            planted.error = "SIGTERM: no capy serve process found to signal"
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGTERM)


async def _warm_up(client) -> None:
    """A first call pays the server's cold start (seconds under load), so the timed ones don't."""
    await client.call_tool("capy_execute", {"language": "shell", "code": "true"})


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


MODES = {
    "cancelled": _cancelled_calls,
    "client-gone": lambda scratch, project, planned: _ended_by(scratch, project, planned, _leave),
    "SIGTERM": lambda scratch, project, planned: _ended_by(
        scratch, project, planned, _terminate_server
    ),
}
