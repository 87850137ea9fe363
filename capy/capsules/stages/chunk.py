"""The chunk stage: a capsule's content cut by the chunking pack into the capsule FTS tables.

Chunk rowids are `chunk_rowid(capsule n, ordinal)` in both tables, so a capsule's chunks are one
rowid range, replaced with a range delete. A chunk's title names the capsule's kind and, where
the metadata has them, its tool or command, so a query for "the pytest run" finds the tool call
even when the output does not say pytest.
"""

from __future__ import annotations

import sqlcipher3

from capy.capsules.model import Capsule
from capy.capsules.stages import StageContext
from capy.store.migrations import chunk_rowid, chunk_rowid_range

_TABLES = ("capsule_chunks", "capsule_chunks_trigram")


def run(context: StageContext, n: int, capsule: Capsule) -> int:
    """Replace capsule `n`'s chunks; the number written."""
    from capy.chunking import chunk_text

    conn = context.conn
    clear(conn, n)
    if capsule.forgotten:
        return 0
    label = capsule_label(capsule)
    chunks = chunk_text(capsule.content, label=label, rules=context.rules.view("chunking"))
    rows = [
        (chunk_rowid(n, ordinal), _title(label, chunk.title), chunk.content, n, ordinal)
        for ordinal, chunk in enumerate(chunks)
    ]
    for table in _TABLES:
        conn.executemany(
            f"INSERT INTO {table} (rowid, title, content, capsule_n, ordinal) "
            "VALUES (?, ?, ?, ?, ?)",
            rows,
        )
    conn.execute(
        "INSERT INTO capsule_chunk_sets (capsule_n, version, chunks) VALUES (?, ?, ?)",
        (n, context.version, len(rows)),
    )
    return len(rows)


def clear(conn: sqlcipher3.Connection, n: int) -> None:
    first, last = chunk_rowid_range(n)
    for table in _TABLES:
        conn.execute(f"DELETE FROM {table} WHERE rowid BETWEEN ? AND ?", (first, last))
    conn.execute("DELETE FROM capsule_chunk_sets WHERE capsule_n = ?", (n,))


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
