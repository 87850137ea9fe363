"""Helpers for driving a real `capy serve` over stdio with the official MCP SDK client.

A module of its own (not conftest): several test folders have a conftest.py, and importing
one by that name would find whichever was loaded first.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

# The tools a client may script: each declares an outputSchema and returns structured content.
STRUCTURED_TOOLS = frozenset(
    {
        "capy_execute",
        "capy_execute_file",
        "capy_search",
        "capy_vault_search",
        "capy_stats",
        "capy_doctor",
        "capy_remember",
        "capy_recall",
        "capy_memory_search",
        "capy_memory_add",
        "capy_memory_feedback",
    }
)


def server_env(home: Path, **extra: str) -> dict[str, str]:
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        **extra,
    }
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


@asynccontextmanager
async def capy_session(
    project: Path,
    home: Path,
    log: Path | None = None,
    serve_args: tuple[str, ...] = (),
    **env: str,
) -> AsyncIterator[Client]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "capy", "serve", "--project", str(project), *serve_args],
        cwd=str(project),
        env=server_env(home, **env),
    )
    log_path = log or project / "server.log"
    with log_path.open("w", encoding="utf-8") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=120) as client:
            yield client


def import_vault(project: Path, home: Path, vault: str, transcripts: Path) -> None:
    """`capy vault import` of `transcripts` into the vault file `vault`, as a user runs it."""
    import subprocess

    imported = subprocess.run(
        [sys.executable, "-m", "capy", "vault", "import", "--source", str(transcripts)],
        cwd=project,
        env={**server_env(home, CAPY_VAULT_PATH=vault), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert imported.returncode == 0, imported.stderr


def text_of(result) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")
