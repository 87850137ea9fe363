"""The capy_* tools: names, input schemas, descriptions that teach when to use them, annotations.

Each tool is a thin shell over one `capy.api` function (STYLE: tools, CLI twins and hooks share
one library API). The descriptions are the agent's only manual, so they say when to use a tool,
when not to, and what comes back. They are registered by concern, one module each.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from capy.api.knowledge import SearchThrottle
    from capy.api.workspace import Workspace


def register_tools(
    server: MCPServer, workspace: Workspace, throttle: SearchThrottle, *, mcp_hooks: bool = False
) -> None:
    """Add every capy_* tool to `server`, bound to `workspace`; `capy_hook` only with
    `mcp_hooks` (the host runs hooks as tool calls: `capy serve --mcp-hooks`)."""
    from capy.server.tools_capsules import register_capsule_tools
    from capy.server.tools_knowledge import register_knowledge_tools
    from capy.server.tools_memory import register_memory_tools
    from capy.server.tools_run import register_run_tools
    from capy.server.tools_service import register_hook_tool, register_service_tools

    for register in (
        register_run_tools,
        register_knowledge_tools,
        register_service_tools,
        register_capsule_tools,
        register_memory_tools,
    ):
        register(server, workspace, throttle)
    if mcp_hooks:
        register_hook_tool(server, workspace)
