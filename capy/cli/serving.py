"""The body of `capy serve`, kept free of cyclopts: `capy.cli.quick` runs the server for the
invocations agents use (`serve [--project P] [--db P] [--mcp-hooks]`) without building the app,
and the cyclopts command calls the same function."""

from __future__ import annotations

from pathlib import Path


def run_server(project: Path | None, db: Path | None, mcp_hooks: bool) -> int:
    """Serve MCP on stdin/stdout until the client disconnects; the exit code."""
    import anyio

    from capy.server.app import serve_stdio

    anyio.run(serve_stdio, project, db, mcp_hooks)
    return 0
