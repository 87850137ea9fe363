"""The MCPServer capy runs: the SDK's, with the knowledge base's sources as its resources and
bad arguments answered in one sentence.

The SDK answers arguments that fail the input schema with pydantic's report: several lines, a
link, and the rejected values themselves, which can hold a secret and would leave without
passing capy's redaction. capy answers instead with which argument broke which rule, and no
value.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, TextContent
from pydantic import AnyUrl, ValidationError

from capy.server.catalog import read_source_resource, source_resources

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from mcp.server.lowlevel.helper_types import ReadResourceContents
    from mcp.types import Resource
    from mcp.types import Tool as MCPTool

    from capy.api.workspace import Workspace


class CapyServer(MCPServer):
    """MCPServer whose resource list is the knowledge base's sources, read on each request."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        add_tools: Callable[[], None],
        mcp_hooks: bool = False,
        **options: Any,
    ) -> None:
        # subscriptions=False: no `subscriptions/listen`, so neither `listChanged` nor
        # `resources.subscribe` is advertised: capy sends no such notifications.
        super().__init__(subscriptions=False, **options)
        self._workspace = workspace
        # The tools are built on first need (capy.server.tool_list says why).
        self._add_tools = add_tools
        self._mcp_hooks = mcp_hooks
        self._tools_lock = threading.Lock()
        self._tools_added = False
        # Set by the first tools/list answer: background work waits for it (capy.server.upkeep).
        self.tools_listed = False

    def add_capy_tools(self) -> None:
        """Build and register the capy_* tools, once, from any thread."""
        with self._tools_lock:
            if not self._tools_added:
                self._add_tools()
                self._tools_added = True

    async def list_tools(self) -> list[MCPTool]:
        from capy.server.tool_list import load_tool_list, save_tool_list

        tools = None if self._tools_added else load_tool_list(self._mcp_hooks)
        if tools is None:
            self.add_capy_tools()
            tools = await super().list_tools()
            save_tool_list(self._mcp_hooks, tools)
        self.tools_listed = True
        return tools

    def _tool_input_schema(self, name: str) -> dict[str, Any] | None:
        self.add_capy_tools()
        return super()._tool_input_schema(name)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Any = None
    ) -> CallToolResult:
        self.add_capy_tools()
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            # Only the arguments' check: a reply that fails its output schema is capy's bug
            # (UnexpectedToolError) and stays the SDK's internal error.
            if isinstance(error, UnexpectedToolError) or not isinstance(
                error.__cause__, ValidationError
            ):
                raise
            text = invalid_arguments(name, error.__cause__)
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)

    async def list_resources(self) -> list[Resource]:
        return await source_resources(self._workspace)

    async def read_resource(
        self, uri: AnyUrl | str, context: Any = None
    ) -> Iterable[ReadResourceContents]:
        return await read_source_resource(self._workspace, str(uri))


def invalid_arguments(tool: str, error: ValidationError) -> str:
    """`capy_search` got invalid arguments: `limit`: Input should be less than or equal to 20."""
    problems = []
    for item in error.errors(include_input=False, include_url=False):
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        problems.append(f"`{where}`: {item['msg']}")
    return (
        f"{tool} got invalid arguments: {'; '.join(problems)}. Its input schema (tools/list) "
        "says what each parameter takes."
    )
