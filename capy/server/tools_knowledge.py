"""The knowledge tools: capy_index, capy_search, capy_vault_search, capy_cleanup."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from capy.server.calls import run_tool
from capy.server.fields import (
    READ_ONLY,
    WRITES_STORE,
    HitsPerQuery,
    Queries,
    ResultsPerQuery,
)
from capy.server.outputs import SearchOutput, VaultSearchOutput

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from capy.api.knowledge import SearchThrottle
    from capy.api.workspace import Workspace


def register_knowledge_tools(
    server: MCPServer, workspace: Workspace, throttle: SearchThrottle
) -> None:
    @server.tool(
        name="capy_index",
        title="Index content for later search",
        annotations=WRITES_STORE,
        description=(
            "Store text or a file in the project's knowledge base (durable, encrypted) so that "
            "capy_search finds it later, in this session or the next. Give `path` to have the "
            "file read here, so its content never passes through your context. Use it for "
            "documentation, specs, long notes you will need again. Indexing the same content "
            "again only marks it as used. One source holds at most the retention pack's cap "
            "(2 MiB by default): over it the reply says what was kept (the start and the end), "
            "and `split=true` keeps all of it as several sources. Give `paths` to index several "
            "files or folders in one call, each file its own source."
        ),
    )
    async def capy_index(
        content: Annotated[str | None, Field(description="Text to index.")] = None,
        path: Annotated[str | None, Field(description="A file to index instead.")] = None,
        source: Annotated[
            str | None, Field(description="Label to store it under (default: the path).")
        ] = None,
        split: Annotated[
            bool,
            Field(description='Keep all of an input over the cap, as sources "LABEL (part N)".'),
        ] = False,
        paths: Annotated[
            list[str] | None,
            Field(
                description="Several files or folders to index instead (a folder: its files, "
                "hidden ones left out), each file labelled by its path."
            ),
        ] = None,
    ) -> CallToolResult:
        return await run_tool(
            workspace,
            "capy_index",
            "capy.api.knowledge:index_knowledge",
            content=content,
            path=path,
            source=source,
            split=split,
            paths=paths,
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
            "capy_execute with an intent is 'ephemeral': this session's own is searched by "
            "default; add include_kinds=['ephemeral'] to search other sessions' output too."
        ),
    )
    async def capy_search(
        queries: Queries,
        limit: ResultsPerQuery = None,
        source: Annotated[
            str | None,
            Field(description="Only this source label, or labels starting with a prefix*."),
        ] = None,
        include_kinds: Annotated[
            list[Literal["durable", "ephemeral", "session"]] | None,
            Field(
                description="Also search these kinds (default: durable and session, plus "
                "this session's own ephemeral output)."
            ),
        ] = None,
        include_vault: Annotated[
            bool,
            Field(description="Also search past sessions in the vault, fused into one ranking."),
        ] = False,
    ) -> Annotated[CallToolResult, SearchOutput]:
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
        limit: HitsPerQuery = None,
        project: Annotated[
            str | None, Field(description="Only sessions of this project (its path).")
        ] = None,
        after: Annotated[
            str | None, Field(description="Only sessions from this date on (YYYY-MM-DD).")
        ] = None,
        before: Annotated[
            str | None, Field(description="Only sessions before this date (YYYY-MM-DD).")
        ] = None,
    ) -> Annotated[CallToolResult, VaultSearchOutput]:
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
