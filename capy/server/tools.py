"""The capy_* tools: names, input schemas, descriptions that teach when to use them, annotations.

Each tool is a thin shell over one `capy.api` function (STYLE: tools, CLI twins and hooks share
one library API). The descriptions are the agent's only manual, so they say when to use a tool,
when not to, and what comes back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import BaseModel, Field

from capy.server.calls import progress_reporter, run_tool

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from capy.api.knowledge import SearchThrottle
    from capy.api.reply import ToolReply
    from capy.api.workspace import Workspace

Language = Annotated[
    str,
    Field(
        description=(
            "The language of the code, e.g. shell, python, javascript, typescript, ruby, go "
            "(aliases such as sh, py, js work). An unknown one gets the list capy runs."
        )
    ),
]
Timeout = Annotated[
    float | None,
    Field(description="Seconds before the run is stopped (default and ceiling from capy's rules)."),
]
Intent = Annotated[
    str | None,
    Field(
        description=(
            "What you are looking for in the output, in words (e.g. 'failing tests and their "
            "errors'). With an intent, long output (over a few KB) is indexed and only the "
            "matching sections come back. Give one whenever output may be long."
        )
    ),
]
Queries = Annotated[
    list[str],
    Field(description="Questions or keywords; each is searched on its own. Batch them here."),
]

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
# Runs arbitrary code: may change files and reach the network, so it is neither read-only nor
# known to be safe to repeat.
RUNS_CODE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True
)
WRITES_STORE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


class BatchCommandInput(BaseModel):
    label: str = Field(description="A short name for this command's output, e.g. 'git-log'.")
    command: str = Field(description="A shell command.")


class FetchRequestInput(BaseModel):
    url: str = Field(description="An http or https URL.")
    source: str | None = Field(default=None, description="Label to index it under.")


def register_tools(server: MCPServer, workspace: Workspace, throttle: SearchThrottle) -> None:
    """Add every capy_* tool to `server`, bound to `workspace`."""

    @server.tool(
        name="capy_execute",
        title="Run code in capy's sandbox",
        annotations=RUNS_CODE,
        description=(
            "Run a snippet (shell, python, javascript, ...) in a sandboxed subprocess in the "
            "project directory and get its output. Use it instead of your shell tool for "
            "anything that prints a lot: test suites, builds, logs, git log, API calls, data "
            "processing. Pass `intent` so long output is indexed and searched for you: only "
            "the matching sections, the searchable terms and how to search further come back. "
            "Short output comes back whole. Do not use it to read a file you want to edit (use "
            "your editor tools), nor for commands the user must watch interactively. "
            "Secrets in the output are redacted; the user's permission rules apply."
        ),
    )
    async def capy_execute(
        language: Language,
        code: Annotated[str, Field(description="The code to run.")],
        timeout: Timeout = None,
        background: Annotated[
            bool,
            Field(
                description=(
                    "Keep the program running past the timeout (a server, a watcher); partial "
                    "output and its pid come back."
                )
            ),
        ] = False,
        intent: Intent = None,
    ) -> CallToolResult:
        return await run_tool(
            workspace,
            "capy_execute",
            "capy.api.execute:execute_code",
            language=language,
            code=code,
            timeout=timeout,
            background=background,
            intent=intent,
        )

    @server.tool(
        name="capy_execute_file",
        title="Process a file in the sandbox",
        annotations=RUNS_CODE,
        description=(
            "Run code over a file without reading the file into your context: the file's "
            "content is in FILE_CONTENT (a variable of the language) and its path in "
            "FILE_CONTENT_PATH; only what your code prints comes back. Use it to summarise, "
            "count, filter or extract from large files (logs, CSV, JSON dumps). Read-deny "
            "permission rules apply to the path. Pass `intent` when the output may be long."
        ),
    )
    async def capy_execute_file(
        path: Annotated[str, Field(description="The file, relative to the project or absolute.")],
        language: Language,
        code: Annotated[str, Field(description="Code that reads FILE_CONTENT and prints.")],
        timeout: Timeout = None,
        intent: Intent = None,
    ) -> CallToolResult:
        return await run_tool(
            workspace,
            "capy_execute_file",
            "capy.api.execute:execute_file",
            path=path,
            language=language,
            code=code,
            timeout=timeout,
            intent=intent,
        )

    @server.tool(
        name="capy_batch_execute",
        title="Run several commands and search their output",
        annotations=RUNS_CODE,
        description=(
            "Run several shell commands (concurrently if you ask), index all their output as "
            "one searchable source, and answer all your queries against it in one call. The "
            "best first step for exploring: e.g. commands git log, ls -R, cat package.json with "
            "queries about what you need. Returns each command's status, the answers per query, "
            "the indexed sections and distinctive terms to search next with capy_search."
        ),
    )
    async def capy_batch_execute(
        ctx: Context,
        commands: Annotated[
            list[BatchCommandInput], Field(description="The commands, each with a label.")
        ],
        queries: Queries,
        timeout: Annotated[
            float | None, Field(description="Seconds for the whole batch (shared).")
        ] = None,
        concurrency: Annotated[
            int | None, Field(description="Commands run at once, 1 to 8 (default 1).", ge=1, le=8)
        ] = None,
    ) -> CallToolResult:
        from capy.api.execute import BatchCommand

        return await run_tool(
            workspace,
            "capy_batch_execute",
            "capy.api.execute:execute_batch",
            commands=[BatchCommand(item.label, item.command) for item in commands],
            queries=queries,
            timeout=timeout,
            concurrency=concurrency,
            progress=progress_reporter(ctx.report_progress),
        )

    @server.tool(
        name="capy_index",
        title="Index content for later search",
        annotations=WRITES_STORE,
        description=(
            "Store text or a file in the project's knowledge base (durable, encrypted) so that "
            "capy_search finds it later, in this session or the next. Give `path` to have the "
            "file read here, so its content never passes through your context. Use it for "
            "documentation, specs, long notes you will need again. Indexing the same content "
            "again only marks it as used."
        ),
    )
    async def capy_index(
        content: Annotated[str | None, Field(description="Text to index.")] = None,
        path: Annotated[str | None, Field(description="A file to index instead.")] = None,
        source: Annotated[
            str | None, Field(description="Label to store it under (default: the path).")
        ] = None,
    ) -> CallToolResult:
        return await run_tool(
            workspace,
            "capy_index",
            "capy.api.knowledge:index_knowledge",
            content=content,
            path=path,
            source=source,
        )

    @server.tool(
        name="capy_search",
        title="Search the knowledge base",
        annotations=READ_ONLY,
        description=(
            "Search everything capy indexed (command output, fetched pages, indexed files) "
            "with several queries at once; each result has its source, section title, the "
            "layer that found it and a snippet. Put all your questions in one call: repeated "
            "calls in a short time get fewer results and then are refused. Output indexed by "
            "capy_execute with an intent is 'ephemeral': add include_kinds=['ephemeral'] (or "
            "the source label it gave you) to search it."
        ),
    )
    async def capy_search(
        queries: Queries,
        limit: Annotated[
            int | None, Field(description="Results per query (default 3, at most 20).", ge=1)
        ] = None,
        source: Annotated[
            str | None,
            Field(description="Only this source label, or labels starting with a prefix*."),
        ] = None,
        include_kinds: Annotated[
            list[Literal["durable", "ephemeral", "session"]] | None,
            Field(description="Also search these kinds (default: durable and session)."),
        ] = None,
        include_vault: Annotated[
            bool,
            Field(description="Also search past sessions in the vault, fused into one ranking."),
        ] = False,
    ) -> CallToolResult:
        return await run_tool(
            workspace,
            "capy_search",
            "capy.api.knowledge:search_knowledge",
            queries=queries,
            limit=limit,
            source=source,
            include_kinds=include_kinds,
            include_vault=include_vault,
            throttle=throttle,
        )

    @server.tool(
        name="capy_vault_search",
        title="Search past agent sessions",
        annotations=ToolAnnotations(
            read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        ),
        description=(
            "Search the vault of past sessions (every project's, kept verbatim by `capy vault "
            "import`) for what was tried, decided or corrected before: each hit gives the "
            "session's title, date and project, the message's role and a snippet. Use it when "
            "the user refers to earlier work ('like we did last week', 'that migration error "
            "again'). Batch your questions in `queries`."
        ),
    )
    async def capy_vault_search(
        queries: Queries,
        limit: Annotated[int | None, Field(description="Hits per query.", ge=1)] = None,
        project: Annotated[
            str | None, Field(description="Only sessions of this project (its path).")
        ] = None,
        after: Annotated[
            str | None, Field(description="Only sessions from this date on (YYYY-MM-DD).")
        ] = None,
        before: Annotated[
            str | None, Field(description="Only sessions before this date (YYYY-MM-DD).")
        ] = None,
    ) -> CallToolResult:
        return await run_tool(
            workspace,
            "capy_vault_search",
            "capy.api.vault:vault_search_reply",
            queries=queries,
            limit=limit,
            project=project,
            after=after,
            before=before,
        )

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
        concurrency: Annotated[
            int | None, Field(description="Fetches at once, 1 to 8.", ge=1, le=8)
        ] = None,
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
    async def capy_stats() -> CallToolResult:
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
    async def capy_doctor() -> CallToolResult:
        return await run_tool(workspace, "capy_doctor", "capy.api.health:doctor_reply")

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
        session_id: Annotated[str, Field(description="${session_id}")] = "",
        cwd: Annotated[str, Field(description="${cwd}")] = "",
        tool_name: Annotated[str, Field(description="${tool_name}")] = "",
        command: Annotated[str, Field(description="${tool_input.command} (Bash)")] = "",
        description: Annotated[str, Field(description="${tool_input.description}")] = "",
        url: Annotated[str, Field(description="${tool_input.url} (WebFetch)")] = "",
        prompt: Annotated[str, Field(description="${tool_input.prompt}")] = "",
        file_path: Annotated[str, Field(description="${tool_input.file_path}")] = "",
        language: Annotated[str, Field(description="${tool_input.language} (capy tools)")] = "",
        code: Annotated[str, Field(description="${tool_input.code} (capy tools)")] = "",
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

    @server.tool(
        name="capy_cleanup",
        title="Clean up the knowledge base",
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
        ),
        description=(
            "List (dry run, the default) or remove what the retention rules say can go: "
            "expired ephemeral and session sources, never-used durable sources with a low "
            "retention score, oversized ones. Only remove when the user asked for it."
        ),
    )
    async def capy_cleanup(
        dry_run: Annotated[bool, Field(description="Only list what would be removed.")] = True,
        source: Annotated[
            str | None, Field(description="Plan removing this one source label instead.")
        ] = None,
        optimize: Annotated[bool, Field(description="Merge full-text index segments.")] = False,
        vacuum: Annotated[bool, Field(description="Give freed space back to the disk.")] = False,
    ) -> CallToolResult:
        return await run_tool(
            workspace,
            "capy_cleanup",
            "capy.api.knowledge:cleanup_knowledge",
            dry_run=dry_run,
            source=source,
            optimize=optimize,
            vacuum=vacuum,
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
