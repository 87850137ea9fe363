"""The memory tools: capy_memory_search, capy_memory_add, capy_memory_feedback."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from capy.api.memory import MAX_RECORDS
from capy.server.calls import run_tool
from capy.server.outputs import MemoryRecordOutput, MemorySearchOutput

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from capy.api.knowledge import SearchThrottle
    from capy.api.workspace import Workspace

RecordType = Literal["rule", "anti_pattern", "preference", "principle"]


def register_memory_tools(
    server: MCPServer, workspace: Workspace, throttle: SearchThrottle
) -> None:
    @server.tool(
        name="capy_memory_search",
        title="Look up what capy learned in earlier sessions",
        annotations=ToolAnnotations(
            read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        ),
        description=(
            "Find the rules, anti-patterns, preferences and principles capy learned from earlier "
            "sessions (errors and their fixes, the user's corrections) that bear on what you are "
            "about to do. Relevant records are already added to prompts by capy's hooks; use "
            "this before a risky or unfamiliar step."
        ),
    )
    async def capy_memory_search(
        query: Annotated[str, Field(description="What you are about to do, in a few words.")],
        limit: Annotated[
            int,
            Field(description=f"Records at most (1-{MAX_RECORDS}).", ge=1, le=MAX_RECORDS),
        ] = 5,
    ) -> Annotated[CallToolResult, MemorySearchOutput]:
        return await run_tool(
            workspace,
            "capy_memory_search",
            "capy.api.memory:memory_search_reply",
            query=query,
            limit=limit,
        )

    @server.tool(
        name="capy_memory_add",
        title="Keep a lesson for later sessions",
        annotations=ToolAnnotations(
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
        description=(
            "Keep a lesson capy should bring back in later sessions: a `rule` (when X, do Y), an "
            "`anti_pattern` (never do X; one naming a dangerous command can block it), a "
            "`preference` of the user's, or a `principle`. Kept as a capsule, so it survives "
            "a rebuild."
        ),
    )
    async def capy_memory_add(
        text: Annotated[str, Field(description="The lesson, in one or two plain sentences.")],
        type: Annotated[RecordType, Field(description="The kind of lesson.")] = "rule",
    ) -> Annotated[CallToolResult, MemoryRecordOutput]:
        return await run_tool(
            workspace, "capy_memory_add", "capy.api.memory:memory_add_reply", text=text, type=type
        )

    @server.tool(
        name="capy_memory_feedback",
        title="Say whether a learned record helped",
        annotations=ToolAnnotations(
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
        description=(
            "Tell capy that a record it showed you helped (`helpful`) or was wrong or "
            "misleading (`harmful`); its confidence rises or falls, and a record that keeps "
            "failing stops being shown."
        ),
    )
    async def capy_memory_feedback(
        record: Annotated[str, Field(description="The record's id (its first 8 characters do).")],
        verdict: Annotated[Literal["helpful", "harmful"], Field(description="Did it help?")],
        why: Annotated[str, Field(description="A few words on why (optional).")] = "",
    ) -> Annotated[CallToolResult, MemoryRecordOutput]:
        return await run_tool(
            workspace,
            "capy_memory_feedback",
            "capy.api.memory:memory_feedback_reply",
            record=record,
            verdict=verdict,
            why=why,
        )
