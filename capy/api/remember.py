"""`capy_remember`: keep a note or a decision the agent wants recalled later, as a capsule."""

from __future__ import annotations

from typing import TYPE_CHECKING

from capy.api.reply import ToolInputError, ToolReply

if TYPE_CHECKING:
    from capy.api.workspace import Workspace

MCP_SOURCE = "mcp"


def remember_reply(
    workspace: Workspace, *, kind: str, content: str, tags: list[str] | None = None
) -> ToolReply:
    """Write one capsule (source `mcp`, redacted like every capsule) and name its id."""
    from capy.capsules import CapsuleDraft, CapsuleError, open_capsules
    from capy.store.errors import StoreError

    if not content.strip():
        raise ToolInputError("give the `content` to keep: the note or the decision and why")
    labels = sorted({" ".join(tag.split()) for tag in tags or () if tag.strip()})
    metadata = {"session_id": workspace.stats.session_id, "tags": labels or None}
    draft = CapsuleDraft(kind=kind, content=content, source=MCP_SOURCE, metadata=metadata)
    try:
        with open_capsules(project_dir=workspace.project_dir, notify=_quiet) as capsules:
            (appended,) = capsules.write([draft])
    except CapsuleError as error:
        raise ToolInputError(error.message) from None
    except StoreError as error:
        return ToolReply(f"The capsule log could not be used: {error.message}", is_error=True)
    said = "Kept" if appended.new else "Already kept"
    return ToolReply(
        f"{said} as {kind} capsule `{appended.id}`; recall finds it by its words.",
        processed_bytes=len(content.encode("utf-8")),
        data={"id": appended.id, "kind": kind, "new": appended.new},
    )


def _quiet(_message: str) -> None:
    """Notices (a migration ran) are not the agent's business."""
