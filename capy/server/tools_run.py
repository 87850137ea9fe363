"""The tools that run code: capy_execute, capy_execute_file, capy_batch_execute."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from mcp.server.mcpserver import Context
from mcp.types import CallToolResult
from pydantic import Field

from capy.server.calls import progress_reporter, run_tool, run_tool_reporting_output
from capy.server.fields import (
    RUNS_CODE,
    BatchCommandInput,
    BatchConcurrency,
    BatchTimeout,
    Intent,
    Language,
    Network,
    Queries,
    Timeout,
)
from capy.server.outputs import RunOutput

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from capy.api.knowledge import SearchThrottle
    from capy.api.workspace import Workspace


def register_run_tools(server: MCPServer, workspace: Workspace, throttle: SearchThrottle) -> None:
    @server.tool(
        name="capy_execute",
        title="Run code in capy's sandbox",
        annotations=RUNS_CODE,
        description=(
            "Run a snippet (shell, python, javascript, ...) in a sandboxed subprocess in the "
            "project directory and get its output. Use it instead of your shell tool for "
            "anything that prints a lot: test suites, builds, logs, git log, API calls, data "
            "processing. Pass `intent` so long output is indexed and searched for you: only "
            "the matching sections and how to search further come back (when nothing "
            "matches, a line saying so and the output's searchable terms). "
            "Without an intent, output over 12 KB (the executor pack's index_threshold_bytes) "
            "is indexed too, and its start, its end, the errors it reports, its source label "
            "and how to search it come back; shorter output comes back whole. Do not use it to "
            "read a file you want to edit (use your editor tools), nor for commands the user "
            "must watch interactively. "
            "Secrets in the output are redacted (a reply says so when the user turned that "
            "off); the user's permission rules apply. The code and everything it starts are "
            "killed when the call ends, times out or is cancelled (a process cap and a memory "
            "cap apply); it reaches the network unless you pass network='off', and the reply's "
            "status line says which network mode ran. Where Linux allows namespaces each call "
            "has its own /tmp, /var/tmp and /dev/shm, gone when it ends: /tmp and /var/tmp "
            "show the machine's files where the kernel allows an overlay (capy doctor says), "
            "but what the call writes there stays its own, so write files that you or a later "
            "call need into the project."
        ),
    )
    async def capy_execute(
        ctx: Context,
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
        network: Network = None,
    ) -> Annotated[CallToolResult, RunOutput]:
        return await run_tool_reporting_output(
            ctx.report_progress,
            workspace,
            "capy_execute",
            "capy.api.execute:execute_code",
            language=language,
            code=code,
            timeout=timeout,
            background=background,
            intent=intent,
            network=network,
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
            "permission rules apply to the path. Pass `intent` when the output may be long "
            "(without one, output over 12 KB comes back as its start, end and errors, indexed "
            "for capy_search), and network='off' to run the code with no network (the status "
            "line says which mode ran). Secrets in the output are redacted."
        ),
    )
    async def capy_execute_file(
        ctx: Context,
        path: Annotated[str, Field(description="The file, relative to the project or absolute.")],
        language: Language,
        code: Annotated[str, Field(description="Code that reads FILE_CONTENT and prints.")],
        timeout: Timeout = None,
        intent: Intent = None,
        network: Network = None,
    ) -> Annotated[CallToolResult, RunOutput]:
        return await run_tool_reporting_output(
            ctx.report_progress,
            workspace,
            "capy_execute_file",
            "capy.api.execute:execute_file",
            path=path,
            language=language,
            code=code,
            timeout=timeout,
            intent=intent,
            network=network,
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
            "the indexed sections and distinctive terms to search next with capy_search. "
            "network='off' runs every command with no network (each status line says which "
            "mode ran)."
        ),
    )
    async def capy_batch_execute(
        ctx: Context,
        commands: Annotated[
            list[BatchCommandInput], Field(description="The commands, each with a label.")
        ],
        queries: Queries,
        timeout: BatchTimeout = None,
        concurrency: BatchConcurrency = None,
        network: Network = None,
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
            network=network,
        )
