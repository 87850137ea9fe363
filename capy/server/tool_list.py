"""The tools/list answer kept on disk, so that a start answers it without building the tools.

Building the capy_* tools (the SDK reads each signature into a pydantic model and derives its
input and output JSON Schemas, `capy.server.outputs` defines the output models) took about
300 ms of every start on a loaded 2-core machine, the largest part of capy's own share of the
time an agent waits for its tools. The answer depends on capy's server code and the versions of
the SDK and pydantic alone: no rule pack shapes a schema (`capy.server.fields`). So a start
that built the tools writes the answer to a file, and later starts answer tools/list from it;
their tools are built right after the answer went out (`capy.server.upkeep`), or by the first
call that needs them, whichever comes first.

The file's name is a fingerprint of everything the answer depends on: capy's version, the
versions of mcp and pydantic, the `--mcp-hooks` choice, and the size and modification time of
every module of `capy.server`. It is read only when it belongs to this user and nobody else may
write to it: tool descriptions are the agent's manual.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.types import Tool


def load_tool_list(mcp_hooks: bool) -> list[Tool] | None:
    """The tools a previous start listed, when nothing they depend on changed since."""
    from capy.watched import read_own_file

    path = _path(mcp_hooks)
    content = None if path is None else read_own_file(path)
    if content is None:
        return None
    try:
        from mcp.types import Tool

        return [Tool.model_validate(entry, by_alias=True) for entry in json.loads(content)]
    except Exception:  # a damaged or foreign file: the tools are built instead
        return None


def save_tool_list(mcp_hooks: bool, tools: list[Tool]) -> None:
    """Best effort: a read-only disk or a missing data folder costs the next start time only."""
    from capy.watched import write_cache_file

    path = _path(mcp_hooks)
    if path is None:
        return
    entries: list[dict[str, Any]] = [
        tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools
    ]
    write_cache_file(path, json.dumps(entries).encode())


def _path(mcp_hooks: bool) -> str | None:
    from capy.watched import cache_dir

    try:
        fingerprint = _fingerprint(mcp_hooks)
    except (OSError, TypeError):  # a package without files to stat: no cache
        return None
    return os.path.join(cache_dir("tools"), f"tools-{fingerprint}.json")


def _fingerprint(mcp_hooks: bool) -> str:
    import mcp
    import mcp.types
    import pydantic

    from capy import __version__

    # Installed files, stat'ed: reading the packages' metadata costs more than the rest.
    files = [mcp.__file__, mcp.types.__file__, pydantic.__file__]
    folder = os.path.dirname(os.path.abspath(__file__))
    files += [
        os.path.join(folder, name) for name in sorted(os.listdir(folder)) if name.endswith(".py")
    ]
    parts: list[object] = [__version__, pydantic.VERSION, mcp_hooks]
    for path in files:
        status = os.stat(str(path))
        parts.append((os.path.basename(str(path)), status.st_size, status.st_mtime_ns))
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:24]
