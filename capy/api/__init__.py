"""capy's one library API: what the MCP tools, the CLI twins and the hooks all call.

Each tool is a function taking a `Workspace` and returning a `ToolReply` whose text is exactly
what the agent reads, so that benchmarks measure the real answer.
"""

from __future__ import annotations

from capy.api.reply import ToolInputError, ToolReply
from capy.api.workspace import Workspace

__all__ = ["ToolInputError", "ToolReply", "Workspace"]
