"""The mcp_tool hook path: a PreToolUse answered by a running `capy serve` over stdio.

What the host pays per hook on this path is one tool call round trip on an open connection,
with no process start; measured here with the official client against a real server.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

# The flat arguments the host would fill from the hook input with ${...} substitution.
_FIELDS = ("command", "description", "url", "prompt", "file_path", "language", "code")


def hook_arguments(event: str, payload: dict) -> dict[str, str]:
    tool_input = payload.get("tool_input") or {}
    arguments = {
        "event": event,
        "session_id": str(payload.get("session_id", "")),
        "cwd": str(payload.get("cwd", "")),
        "tool_name": str(payload.get("tool_name", "")),
    }
    arguments.update({name: str(tool_input[name]) for name in _FIELDS if name in tool_input})
    return arguments


def through_server(
    cases: list[tuple[str, str, dict]], project: Path, environ: dict[str, str], runs: int
) -> list[dict]:
    """Median round trip of `capy_hook` per PreToolUse case, on one open connection."""
    import anyio

    return anyio.run(_measure, cases, project, environ, runs)


async def _measure(
    cases: list[tuple[str, str, dict]], project: Path, environ: dict[str, str], runs: int
) -> list[dict]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "capy", "serve", "--project", str(project)],
        cwd=str(project),
        env=environ,
    )
    rows = []
    with open(project / "hook-server.log", "w", encoding="utf-8") as log:
        async with Client(stdio_client(params, errlog=log)) as client:
            for name, event, payload in cases:
                arguments = hook_arguments(event, payload)
                await client.call_tool("capy_hook", arguments)  # warm
                samples = []
                for _ in range(runs):
                    start = time.perf_counter()
                    await client.call_tool("capy_hook", arguments)
                    samples.append((time.perf_counter() - start) * 1000)
                rows.append({"name": name, "median_ms": round(statistics.median(samples), 2)})
    return rows
