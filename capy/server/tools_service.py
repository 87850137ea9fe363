"""The web and service tools: capy_fetch_and_index, capy_stats, capy_doctor; and capy_hook."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from capy.server.calls import progress_reporter, run_tool
from capy.server.fields import (
    READ_ONLY,
    FetchConcurrency,
    FetchRequestInput,
)
from capy.server.outputs import DoctorOutput, StatsOutput

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from capy.api.knowledge import SearchThrottle
    from capy.api.reply import ToolReply
    from capy.api.workspace import Workspace


def register_service_tools(
    server: MCPServer, workspace: Workspace, throttle: SearchThrottle
) -> None:
    @server.tool(
        name="capy_fetch_and_index",
        title="Fetch web pages into the knowledge base",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=True
        ),
        description=(
            "Fetch one or more URLs (documentation, API responses), convert HTML to markdown, "
            "index them and get a short preview and how to search them, instead of pulling "
            "whole pages into your context. Cached per URL: a fresh copy is reused unless "
            "`force`. Internal and cloud-metadata addresses are refused. For GitHub or GitLab "
            "issues and pull requests you get the gh/glab command to use instead."
        ),
    )
    async def capy_fetch_and_index(
        ctx: Context,
        url: Annotated[str | None, Field(description="One URL to fetch.")] = None,
        requests: Annotated[
            list[FetchRequestInput] | None, Field(description="Several URLs to fetch at once.")
        ] = None,
        source: Annotated[str | None, Field(description="Label to index under.")] = None,
        force: Annotated[bool, Field(description="Fetch again even if cached.")] = False,
        kind: Annotated[
            Literal["durable", "ephemeral"] | None,
            Field(description="durable (kept) or ephemeral (expires); default from capy's rules."),
        ] = None,
        concurrency: FetchConcurrency = None,
    ) -> CallToolResult:
        return await run_tool(
            workspace,
            "capy_fetch_and_index",
            _fetch,
            url=url,
            requests=requests or [],
            source=source,
            force=force,
            kind=kind,
            concurrency=concurrency,
            progress=progress_reporter(ctx.report_progress),
        )

    @server.tool(
        name="capy_stats",
        title="What capy kept out of your context",
        annotations=READ_ONLY,
        description=(
            "Report this session's savings: bytes processed against bytes returned per tool, "
            "estimated tokens saved, cache hits, and the knowledge base's sources by kind and "
            "tier. Cheap; use it when the user asks what capy did."
        ),
    )
    async def capy_stats() -> Annotated[CallToolResult, StatsOutput]:
        return await run_tool(workspace, "capy_stats", "capy.api.savings:stats_reply")

    @server.tool(
        name="capy_doctor",
        title="Check capy's health",
        annotations=READ_ONLY,
        description=(
            "Check every part of capy (language runtimes, SQLCipher and FTS5, configuration, "
            "rule packs, key files, knowledge-base health, hook and MCP registration, "
            "permission policies) and say what to do about each problem. Use it when a capy "
            "tool fails in a way its message does not explain."
        ),
    )
    async def capy_doctor() -> Annotated[CallToolResult, DoctorOutput]:
        return await run_tool(workspace, "capy_doctor", "capy.api.health:doctor_reply")


def register_hook_tool(server: MCPServer, workspace: Workspace) -> None:
    """`capy_hook`, for hosts that run hooks as MCP tool calls; listed only when the server was
    started for that (`capy serve --mcp-hooks`), so no agent pays for a tool it must not call."""

    @server.tool(
        name="capy_hook",
        title="Answer an agent hook (for the host, not the agent)",
        annotations=ToolAnnotations(
            read_only_hint=False,
            destructive_hint=False,
            idempotent_hint=False,
            open_world_hint=False,
        ),
        description=(
            "Not for agents: Claude Code calls this as an `mcp_tool` hook before and after tool "
            "calls, so capy's routing and permission checks run in this server with no process "
            "start. It answers with the JSON a `capy hook` command would print (empty: no "
            "decision). Calling it yourself changes nothing you can use."
        ),
    )
    async def capy_hook(
        event: Annotated[str, Field(description="The hook event, e.g. PreToolUse.")],
        session_id: Annotated[str, Field(description="The hook input's session id.")] = "",
        cwd: Annotated[str, Field(description="The hook input's working directory.")] = "",
        tool_name: Annotated[str, Field(description="The tool the agent is calling.")] = "",
        command: Annotated[str, Field(description="The tool input's command (Bash).")] = "",
        description: Annotated[str, Field(description="The tool input's description.")] = "",
        url: Annotated[str, Field(description="The tool input's URL (WebFetch).")] = "",
        prompt: Annotated[str, Field(description="The tool input's prompt.")] = "",
        file_path: Annotated[str, Field(description="The tool input's file path.")] = "",
        language: Annotated[str, Field(description="The tool input's language (capy tools).")] = "",
        code: Annotated[str, Field(description="The tool input's code (capy tools).")] = "",
    ) -> CallToolResult:
        tool_input = {
            "command": command,
            "description": description,
            "url": url,
            "prompt": prompt,
            "file_path": file_path,
            "language": language,
            "code": code,
        }
        return await run_tool(
            workspace,
            "capy_hook",
            "capy.api.hooks:hook_reply",
            event=event,
            session_id=session_id,
            cwd=cwd,
            tool_name=tool_name,
            tool_input=tool_input,
        )


def _fetch(
    workspace: Workspace,
    *,
    url: str | None,
    requests: list[FetchRequestInput],
    kind: str | None,
    **options: Any,
) -> ToolReply:
    """`url` and `requests` are two spellings of one list; `kind` None means the default."""
    from capy.api import ToolInputError
    from capy.api.fetch import fetch_and_index

    urls: list[Any] = [{"url": item.url, "source": item.source} for item in requests]
    if url is not None:
        urls.insert(0, url)
    if not urls:
        raise ToolInputError("give a `url`, or `requests` with one or more URLs")
    if kind is not None:
        options["kind"] = kind
    return fetch_and_index(workspace, urls, **options)
