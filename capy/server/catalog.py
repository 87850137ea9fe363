"""What the server offers besides tools: the knowledge base's sources as resources, and the
routing block as a prompt. Each is real or not advertised: nothing here changes while a session
runs in a way a client could subscribe to, so no `subscribe` and no `listChanged` is claimed.

Resources are `capy://sources/<id>`: listed newest first (the kinds a search finds by default),
read as their stored, redacted text. A client shows them to its user, who attaches one; the
model does not pull them on its own, which is why whole texts are fine here and not in tools.
`CapyServer` (capy.server.mcp_server) serves them with the functions here.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import anyio.to_thread
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, Resource

from capy.units import human_bytes

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from capy.api.sources import SourceEntry
    from capy.api.workspace import Workspace

SOURCE_URI = "capy://sources/{source_id}"
_SOURCE_URI = re.compile(r"capy://sources/(\d+)")
ROUTING_PROMPT = "capy_routing"


async def source_resources(workspace: Workspace) -> list[Resource]:
    """resources/list: the sources, or one sentence (an MCP error) when the store fails."""
    from capy.api.sources import list_sources

    try:
        entries = await anyio.to_thread.run_sync(list_sources, workspace)
    except Exception as error:  # one sentence for the client, never a traceback
        raise MCPError(code=INTERNAL_ERROR, message=_store_problem(error)) from None
    return [_resource(entry) for entry in entries]


async def read_source_resource(workspace: Workspace, uri: str) -> list[ReadResourceContents]:
    """resources/read of `capy://sources/<id>`: its stored text, redacted."""
    from capy.api.sources import SourceNotFound, read_source

    match = _SOURCE_URI.fullmatch(uri)
    if match is None:
        raise ResourceNotFoundError(
            f"{uri} is not a capy resource; capy's are {SOURCE_URI}, listed by resources/list."
        )
    try:
        entry, text = await anyio.to_thread.run_sync(read_source, workspace, int(match.group(1)))
    except SourceNotFound:
        raise ResourceNotFoundError(
            f"No source {match.group(1)} in the knowledge base (it expired, was removed or "
            "re-indexed under a new id); list them again with resources/list."
        ) from None
    except Exception as error:
        raise ResourceError(_store_problem(error)) from None
    return [ReadResourceContents(content=text, mime_type=entry.media_type)]


def register_catalog(server: MCPServer, workspace: Workspace) -> None:
    """The routing prompt (resources come with `CapyServer` itself)."""

    @server.prompt(
        name=ROUTING_PROMPT,
        title="How to use capy's tools",
        description=(
            "The routing block capy's hooks give an agent at session start: which capy tool to "
            "use for what, and when plain tools are right. For agents that run without capy's "
            "hooks."
        ),
    )
    async def capy_routing() -> str:
        return await anyio.to_thread.run_sync(_routing_text, workspace)


def _routing_text(workspace: Workspace) -> str:
    return workspace.rules.view("routing").routing_block.text.strip()


def _resource(entry: SourceEntry) -> Resource:
    import time

    when = (
        time.strftime(", indexed %Y-%m-%d", time.gmtime(entry.indexed_at))
        if entry.indexed_at
        else ""
    )
    return Resource(
        uri=SOURCE_URI.format(source_id=entry.source_id),
        name=entry.label,
        title=entry.label,
        description=(
            f"{entry.kind} {entry.content_type} source, {human_bytes(entry.raw_size)}{when}"
        ),
        mime_type=entry.media_type,
        size=entry.raw_size,
    )


def _store_problem(error: Exception) -> str:
    from capy.server.calls import explain_error

    return explain_error("resources", error)
