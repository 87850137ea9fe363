"""`capy_memory_search`, `capy_memory_add`, `capy_memory_feedback`: the agent's side of memory,
over the same library calls as `capy memory ...`."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from capy.api.reply import ToolInputError, ToolReply

if TYPE_CHECKING:
    from capy.api.workspace import Workspace

MCP_SOURCE = "mcp"
MAX_RECORDS = 20  # records one capy_memory_search returns at most; its schema says so too


def _with_store(workspace: Workspace, action: Callable[[Any], ToolReply]) -> ToolReply:
    from capy.capsules import CapsuleError, open_capsules
    from capy.store.errors import StoreError

    try:
        with open_capsules(project_dir=workspace.project_dir, notify=_quiet) as store:
            return action(store)
    except CapsuleError as error:
        raise ToolInputError(error.message) from None
    except StoreError as error:
        return ToolReply(f"The memory could not be used: {error.message}", is_error=True)


def _shown(record: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": record["id"],
        "type": record["type"],
        "text": record["text"],
        "confidence": record["confidence"],
        "status": record["status"],
    }


def memory_search_reply(workspace: Workspace, *, query: str, limit: int = 5) -> ToolReply:
    """The learned records most relevant to `query`."""
    if not query.strip():
        raise ToolInputError("give a `query`: what you are about to do, in a few words")

    def action(store: Any) -> ToolReply:
        from capy.memory.manage import search_records

        records = search_records(store, query, max(1, min(limit, MAX_RECORDS)))
        found = [_shown(record) for record in records]
        if not found:
            return ToolReply("No learned record is relevant to that.", data={"records": []})
        lines = [
            f"- `{item['id'][:8]}` [{item['type']} {item['confidence']:.2f}] {item['text']}"
            for item in found
        ]
        return ToolReply("\n".join(["Learned records:", *lines]), data={"records": found})

    return _with_store(workspace, action)


def memory_add_reply(workspace: Workspace, *, text: str, type: str = "rule") -> ToolReply:
    """Keep a rule, anti-pattern, preference or principle the agent was told or worked out."""

    def action(store: Any) -> ToolReply:
        from capy.memory.manage import add_record

        record = add_record(store, text, type, source=MCP_SOURCE)
        return ToolReply(
            f"Kept as {record['type']} `{record['id'][:8]}` ({record['confidence']:.2f}).",
            data={"record": _shown(record)},
        )

    return _with_store(workspace, action)


def memory_feedback_reply(
    workspace: Workspace, *, record: str, verdict: str, why: str = ""
) -> ToolReply:
    """Say that a record helped or was wrong; its confidence follows."""

    def action(store: Any) -> ToolReply:
        from capy.memory.manage import give_feedback

        found = give_feedback(
            store,
            record,
            verdict,
            why=why,
            source=MCP_SOURCE,
            session_id=workspace.stats.session_id,
        )
        return ToolReply(
            f"Noted: `{found['id'][:8]}` is now {found['confidence']:.2f} ({found['status']}).",
            data={"record": _shown(found)},
        )

    return _with_store(workspace, action)


def _quiet(_message: str) -> None:
    """Notices (a migration ran) are not the agent's business."""
