"""The chunk stage: a capsule's content cut by the chunking pack into the capsule FTS tables.

Chunk rowids are `chunk_rowid(capsule n, ordinal)` in both tables, so a capsule's chunks are one
rowid range, replaced with a range delete. A chunk's title names the capsule's kind and, where
the metadata has them, its tool or command, so a query for "the pytest run" finds the tool call
even when the output does not say pytest.
"""

from __future__ import annotations

from capy.capsules.model import Capsule
from capy.capsules.sqlite.derived import clear_chunks, write_chunks
from capy.capsules.stages import StageContext


def run(context: StageContext, n: int, capsule: Capsule) -> int:
    """Replace capsule `n`'s chunks; the number written."""
    from capy.chunking import chunk_text

    clear_chunks(context.conn, n)
    if capsule.forgotten:
        return 0
    label = capsule_label(capsule)
    chunks = chunk_text(capsule.content, label=label, rules=context.rules.view("chunking"))
    pieces = [(_title(label, chunk.title), chunk.content) for chunk in chunks]
    write_chunks(context.conn, n, pieces, context.version)
    return len(pieces)


def capsule_label(capsule: Capsule) -> str:
    """What the capsule is about in a few words: its kind, then its tool, command or files."""
    meta = capsule.metadata
    parts = [capsule.kind.replace("_", " ")]
    for key in ("tool", "command"):
        if isinstance(meta.get(key), str) and meta[key]:
            parts.append(meta[key])
    files = meta.get("files")
    if isinstance(files, list) and files:
        parts.append(" ".join(str(name) for name in files[:3]))
    return " ".join(parts)


def _title(label: str, title: str) -> str:
    if not title or title.startswith(label):
        return title or label
    return f"{label} - {title}"
