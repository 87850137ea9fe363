"""Agent hooks: `capy hook <event>` and the same entry for the MCP server.

`handle(event, payload, platform=...)` takes the raw stdin bytes and returns a `HookOutcome`
(stdout, stderr, exit code). It imports only what the event needs: no pydantic, httpx, MCP SDK
or store on the per-tool-call path.
"""

from __future__ import annotations

from capy.hooks.dispatch import handle
from capy.hooks.outcome import HookOutcome

__all__ = ["HookOutcome", "handle"]
