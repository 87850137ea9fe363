"""Writing a session's events and snapshot into the knowledge base (kind `session`).

This is the only hook code that opens the store, and it runs at session boundaries (PreCompact,
SessionEnd), not on every tool call. A missing key, a locked or damaged database comes back as
one line of text for stderr; the hook still answers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from capy.hooks.events import as_markdown

SESSION_KIND = "session"


def session_label(session_id: str) -> str:
    return f"session {session_id} events"


def snapshot_label(session_id: str) -> str:
    return f"session {session_id} snapshot"


def persist_session(
    project_root: Path, session_id: str, state: dict[str, Any], snapshot: str | None = None
) -> str | None:
    """Index the session's events (and snapshot); None on success, else why it failed."""
    if not state.get("events"):
        return None
    from capy.config import ConfigError
    from capy.store import StoreError, open_store
    from capy.store.indexing import index_content

    try:
        with open_store(project_root, notify=_quiet) as store:
            index_content(
                store,
                as_markdown(session_id, state),
                label=session_label(session_id),
                kind=SESSION_KIND,
                content_type="markdown",
            )
            if snapshot:
                index_content(
                    store,
                    snapshot,
                    label=snapshot_label(session_id),
                    kind=SESSION_KIND,
                    content_type="markdown",
                )
    except (StoreError, ConfigError) as error:
        return f"the session could not be saved to the knowledge base: {error.message}"
    except Exception as error:  # sqlite "database is locked" and the like
        return f"the session could not be saved to the knowledge base ({type(error).__name__})"
    return None


def _quiet(_message: str) -> None:
    """Store notices (a new key file, an upgrade) are for the CLI, not for a hook's stderr."""
