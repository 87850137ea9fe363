"""The capsule tools: capy_remember and capy_recall."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from capy.server.calls import run_tool
from capy.server.outputs import RecallOutput, RememberOutput

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
            "capsule log, secrets redacted, and the reply names its id (the same kind, words "
            "and tags again name the capsule kept before). Prompts, tool calls, "
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

    @server.tool(
        name="capy_recall",
        title="Recall what happened in past sessions",
        annotations=ToolAnnotations(
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
        description=(
            "Recall what happened in earlier sessions of this project (or all projects): the "
            "prompts, responses, tool calls, diffs, errors, notes and decisions capy kept, as a "
            "markdown brief within `budget_tokens`. Each item names its capsule id, kind, time "
            "and session; pass an id as the query to see that capsule whole. Ask in words "
            "('why did the import fail', 'what did we decide about retries'); narrow with "
            "`kinds` and `since` (ISO 8601). Below a relevance floor it says nothing matched."
        ),
    )
    async def capy_recall(
        query: Annotated[str, Field(description="What to recall, in words, or a capsule id.")],
        budget_tokens: Annotated[
            int,
            Field(description="Tokens the brief may use (kept within the capsules pack's limits)."),
        ] = 1500,
        scope: Annotated[
            Literal["project", "all"],
            Field(description="project (this project's capsules) or all (every project's)."),
        ] = "project",
        kinds: Annotated[
            list[str] | None,
            Field(description="Only these kinds (prompt, response, tool_call, diff, error, ...)."),
        ] = None,
        since: Annotated[
            str | None, Field(description="Only capsules from this ISO 8601 time on.")
        ] = None,
    ) -> Annotated[CallToolResult, RecallOutput]:
        return await run_tool(
            workspace,
            "capy_recall",
            "capy.api.recall:recall_reply",
            query=query,
            budget_tokens=budget_tokens,
            scope=scope,
            kinds=kinds,
            since=since,
        )
