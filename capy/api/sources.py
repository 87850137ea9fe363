"""The knowledge base's sources as a list and as text: what the MCP server offers as resources.

A client shows resources to its user, who picks one to attach (the model never pulls them on
its own), so the list is the sources a search finds by default (the retention pack's
`default_search` kinds: what was indexed to be kept), newest first and at most the pack's
`listing.max_sources`, and reading one gives its stored text. Labels and text leave through
the same redaction as every tool reply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from capy.api.reply import ToolReply

if TYPE_CHECKING:
    from capy.api.workspace import Workspace

# A content type's media type, where one is more precise than text/plain.
_MEDIA_TYPES = {"markdown": "text/markdown", "json": "application/json", "csv": "text/csv"}


@dataclass(frozen=True)
class SourceEntry:
    source_id: int
    label: str
    kind: str
    content_type: str
    raw_size: int
    indexed_at: int | None  # unix time

    @property
    def media_type(self) -> str:
        return _MEDIA_TYPES.get(self.content_type, "text/plain")


class SourceNotFound(LookupError):
    """No source has that id (it expired, was cleaned up or re-indexed under a new one)."""


def list_sources(workspace: Workspace) -> list[SourceEntry]:
    """The sources of the default-search kinds, newest first, labels redacted (as in a reply;
    not at all when the user turned reply redaction off)."""
    from capy.api.outbound import text_redactor
    from capy.security.controls import neutralise_controls

    retention = workspace.rules.view("retention")
    kinds = [str(kind) for kind in retention.kinds.default_search]
    marks = ", ".join("?" * len(kinds))
    with workspace.store() as store:
        rows = store.conn.execute(
            "SELECT id, label, kind, content_type, raw_size, indexed_at FROM sources "
            f"WHERE kind IN ({marks}) ORDER BY coalesce(indexed_at, created_at) DESC, id DESC "
            "LIMIT ?",
            [*kinds, retention.listing.max_sources],
        ).fetchall()
    redact = text_redactor(workspace) or (lambda text: text)
    return [SourceEntry(row[0], neutralise_controls(redact(row[1])), *row[2:]) for row in rows]


def read_source(workspace: Workspace, source_id: int) -> tuple[SourceEntry, str]:
    """The source and its stored text, redacted on its way out like any reply."""
    from capy.api.outbound import outbound_reply
    from capy.store.codec import decompress_text

    with workspace.store() as store:
        row = store.conn.execute(
            "SELECT id, label, kind, content_type, raw_size, indexed_at, raw FROM sources "
            "WHERE id = ?",
            (source_id,),
        ).fetchone()
    if row is None:
        raise SourceNotFound(source_id)
    entry = SourceEntry(*row[:6])
    text = outbound_reply(workspace, ToolReply(decompress_text(row[6]))).text
    return entry, text
