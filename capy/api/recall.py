"""`capy_recall`: what the capsule log holds about a query, as a brief within a token budget."""

from __future__ import annotations

from typing import TYPE_CHECKING

from capy.api.reply import ToolInputError, ToolReply

if TYPE_CHECKING:
    from capy.api.workspace import Workspace


def recall_reply(
    workspace: Workspace,
    *,
    query: str,
    budget_tokens: int | None = None,
    scope: str = "project",
    kinds: list[str] | None = None,
    since: str | None = None,
) -> ToolReply:
    """Recall `query` (or a capsule by its id) from the project's capsule log."""
    from capy.capsules import CapsuleError
    from capy.capsules.location import locate_capsules
    from capy.capsules.model import canonical_time
    from capy.capsules.recall import recall
    from capy.store.errors import StoreError

    if not query.strip():
        raise ToolInputError("give a `query`: what to recall, in words, or a capsule id")
    if not locate_capsules(None, workspace.project_dir).path.exists():
        return ToolReply(
            "Nothing to recall yet: no capsule has been kept for this project.",
            data={"query": query, "budget_tokens": 0, "tokens": 0, "items": []},
        )
    try:
        if since is not None:
            canonical_time(since, name="since")  # a bad one is named as the agent gave it
        with workspace.capsules() as capsules:
            result = recall(
                capsules,
                query,
                budget_tokens=budget_tokens,
                scope=scope,  # type: ignore[arg-type]
                kinds=kinds,
                since=since,
            )
    except CapsuleError as error:
        raise ToolInputError(error.message) from None
    except StoreError as error:
        return ToolReply(f"The capsule log could not be used: {error.message}", is_error=True)
    data = result.as_json()
    data.pop("brief")
    return ToolReply(
        result.brief,
        processed_bytes=sum(len(item.text.encode("utf-8")) for item in result.items),
        data=data,
    )
