"""`capy serve`: the MCP server on stdio, as agents start it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from cyclopts import Parameter


def serve(
    *,
    project: Annotated[Path | None, Parameter(name="--project")] = None,
    db: Annotated[Path | None, Parameter(name="--db")] = None,
) -> int:
    """Run capy's MCP server on stdin/stdout until the client disconnects.

    Register it with an agent as the command `capy serve` (`capy setup` does this for you).

    Parameters
    ----------
    project
        The project directory (default: the current directory's project root).
    db
        Database file to use instead of the project's (also CAPY_DB_PATH).
    """
    import anyio

    from capy.server.app import serve_stdio

    anyio.run(serve_stdio, project, db)
    return 0
