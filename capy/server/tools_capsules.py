"""The capsule tools: capy_remember."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from capy.server.calls import run_tool
from capy.server.outputs import RememberOutput

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from capy.api.knowledge import SearchThrottle
    from capy.api.workspace import Workspace


def register_capsule_tools(
    server: MCPServer, workspace: Workspace, throttle: SearchThrottle
) -> None:
    @server.tool(
        name="capy_remember",
        title="Keep a note or a decision for later sessions",
        annotations=ToolAnnotations(
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
        description=(
            "Keep something worth recalling in later sessions: a `note` (a fact learned, a "
            "gotcha, where something lives) or a `decision` (what was chosen and why, so it is "
            "not made again differently). It is stored as an immutable capsule in capy's "
            "capsule log, secrets redacted, and the reply names its id. Prompts, tool calls, "
            "diffs, errors and responses are captured by capy's hooks already: use this only "
            "for what you want kept on purpose."
        ),
    )
    async def capy_remember(
        kind: Annotated[
            Literal["note", "decision"],
            Field(description="note (something learned) or decision (a choice and its reason)."),
        ],
        content: Annotated[str, Field(description="What to keep, in plain words.")],
        tags: Annotated[
            list[str] | None, Field(description="Short labels to find it by (e.g. 'build').")
        ] = None,
    ) -> Annotated[CallToolResult, RememberOutput]:
        return await run_tool(
            workspace,
            "capy_remember",
            "capy.api.remember:remember_reply",
            kind=kind,
            content=content,
            tags=tags,
        )
