"""CLI twins of the MCP tools: the same `capy.api` call, its reply printed for a person."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capy.api import ToolReply, Workspace


def print_reply(
    work: Callable[..., ToolReply], /, *, db: Path | None = None, **arguments: Any
) -> int:
    """Run `work(workspace, **arguments)` and print its markdown; exit 2 when it is an error."""
    from capy.api import ToolInputError
    from capy.cli.output import error_line
    from capy.cli.store import guarded
    from capy.cli.tables import print_markdown

    def run() -> int:
        try:
            reply = work(workspace_for(db), **arguments)
        except ToolInputError as error:
            error_line(str(error))
            return 2
        stream = sys.stderr if reply.is_error else sys.stdout
        print_markdown(reply.text, file=stream)
        return 2 if reply.is_error else 0

    return guarded(run)


def workspace_for(db: Path | None) -> Workspace:
    """The workspace of one command: its replies suggest commands, not tool calls."""
    from capy.api.hints import Audience
    from capy.cli.warm import current

    context = current() if db is None else None
    if context is not None:  # a warm start: settings and rules from the cache
        from capy.cli.warm_workspace import WarmWorkspace

        return WarmWorkspace(context, audience=Audience.PERSON)
    from capy.api import Workspace

    return Workspace(db_path=db, audience=Audience.PERSON)
