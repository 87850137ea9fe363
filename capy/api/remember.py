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
            (prepared,) = capsules.prepare([draft])
            kept = _kept_already(capsules, prepared, labels)
            new = kept is None
            capsule_id = capsules.append([prepared])[0].id if new else kept
    except CapsuleError as error:
        raise ToolInputError(error.message) from None
    except StoreError as error:
        return ToolReply(f"The capsule log could not be used: {error.message}", is_error=True)
    said = "Kept" if new else "Already kept"
    return ToolReply(
        f"{said} as {kind} capsule `{capsule_id}`; recall finds it by its words.",
        processed_bytes=len(content.encode("utf-8")),
        data={"id": capsule_id, "kind": kind, "new": new},
    )


def _kept_already(capsules, prepared, labels: list[str]) -> str | None:
    """The id of a live capsule this tool kept before with the same kind, words and tags, in
    any session: the tool is idempotent, so a retried or repeated call adds nothing."""
    same = capsules.backend.same_content(
        prepared.scope, prepared.source, prepared.kind, prepared.content
    )
    for _, capsule in same:
        if sorted(capsule.metadata.get("tags") or ()) == labels:
            return capsule.id
    return None


def _quiet(_message: str) -> None:
    """Notices (a migration ran) are not the agent's business."""
