"""`capy serve`: the MCP server on stdio, as agents start it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from cyclopts import Parameter


def serve(
    *,
    project: Annotated[Path | None, Parameter(name="--project")] = None,
    db: Annotated[Path | None, Parameter(name="--db")] = None,
    mcp_hooks: Annotated[bool, Parameter(name="--mcp-hooks", negative=())] = False,
) -> int:
    """Run capy's MCP server on stdin/stdout until the client disconnects.

    Register it with an agent as the command `capy serve`; `capy setup` does this for you, with
    the absolute path of capy so the agent finds it from any shell.

    Parameters
    ----------
    project
        The project directory (default: the current directory's project root).
    db
        Database file to use instead of the project's (also CAPY_DB_PATH).
    mcp_hooks
        Also list `capy_hook`, the tool Claude Code calls when its hooks run as MCP tool calls
        (`capy setup --mcp-hooks` writes this flag); without it no agent sees that tool.
    """
    from capy.cli.serving import run_server

    return run_server(project, db, mcp_hooks)
