"""`capy_hook`: a running server answers a hook with no process start.

Claude Code can run a hook as a call to an MCP tool (`"type": "mcp_tool"`), filling the tool's
arguments from the hook's input with `${path}` substitution, and reads the tool's text the way
it reads a command hook's stdout. The arguments come flat (strings) for that reason; this
rebuilds the payload a command hook would have received and answers it with the same code.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from capy.api.reply import ToolReply

if TYPE_CHECKING:
    from capy.api.workspace import Workspace

logger = logging.getLogger("capy.server")


def hook_reply(
    workspace: Workspace,
    *,
    event: str,
    session_id: str = "",
    cwd: str = "",
    tool_name: str = "",
    tool_input: dict[str, str] | None = None,
) -> ToolReply:
    from capy.hooks import handle

    payload = {
        "hook_event_name": event,
        "session_id": session_id,
        "cwd": cwd or str(workspace.project_dir),
        "tool_name": tool_name,
        # Unfilled `${...}` fields arrive empty: leave them out, as the host would have.
        "tool_input": {name: value for name, value in (tool_input or {}).items() if value},
    }
    project = Path(cwd) if cwd else workspace.project_dir
    outcome = handle(
        event, json.dumps(payload).encode("utf-8"), platform="claude-code", project_dir=project
    )
    if outcome.stderr.strip():
        logger.info("hook %s: %s", event, outcome.stderr.strip())
    # Empty text is the pass-through answer, exactly as an empty stdout is for a command hook.
    return ToolReply(outcome.stdout, for_host=True)
