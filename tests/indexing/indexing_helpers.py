"""Helpers the indexing tests share: reading chunks and vocabulary back, running the CLI."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

from capy.store import chunk_rowid_range
from capy.store.vocabulary import term_counts


def chunks_of(store, source_id: int, table: str = "chunks") -> list[tuple]:
    first, last = chunk_rowid_range(source_id)
    return store.conn.execute(
        f"SELECT rowid, title, content, source_id, ordinal FROM {table} "
        "WHERE rowid BETWEEN ? AND ? ORDER BY rowid",
        (first, last),
    ).fetchall()


def block_rowids(chunk_rowids) -> list[int]:
    """The trigram table's rows that hold these chunks: a row per block (migration 0011)."""
    from capy.store.trigram_blocks import block_rowid

    return sorted({block_rowid(rowid) for rowid in chunk_rowids})


def trigram_rowids(store, source_id: int) -> list[int]:
    """The source's rows in the trigram table (an index only: it returns no text)."""
    first, last = chunk_rowid_range(source_id)
    return [
        row[0]
        for row in store.conn.execute(
            "SELECT rowid FROM chunks_trigram WHERE rowid BETWEEN ? AND ? ORDER BY rowid",
            (first, last),
        )
    ]


def trigram_finds(store, source_id: int, text: str) -> list[int]:
    """The source's rows the trigram table finds `text` (a substring) in."""
    first, last = chunk_rowid_range(source_id)
    phrase = '"' + text.replace('"', '""') + '"'
    return [
        row[0]
        for row in store.conn.execute(
            "SELECT rowid FROM chunks_trigram WHERE chunks_trigram MATCH ? "
            "AND rowid BETWEEN ? AND ? ORDER BY rowid",
            (phrase, first, last),
        )
    ]


def vocabulary(store) -> Counter[str]:
    return Counter(dict(store.conn.execute("SELECT term, frequency FROM vocabulary")))


def expected_vocabulary(store) -> Counter[str]:
    """What the vocabulary must hold: the counts of every chunk readers can see."""
    rows = store.conn.execute("SELECT title, content FROM chunks").fetchall()
    return term_counts(text for row in rows for text in row)


def source_row(store, label: str, kind: str = "durable") -> dict:
    cursor = store.conn.execute("SELECT * FROM sources WHERE label = ? AND kind = ?", (label, kind))
    row = cursor.fetchone()
    return None if row is None else dict(zip([d[0] for d in cursor.description], row, strict=True))


def capy(*args: str, stdin: bytes | None = None, cwd: Path | None = None):
    """Run `python -m capy ...` as a real subprocess with this test's environment."""
    return subprocess.run(
        [sys.executable, "-m", "capy", *args],
        input=stdin,
        capture_output=True,
        cwd=cwd or Path.cwd(),
        env={**os.environ, "COLUMNS": "100", "NO_COLOR": "1"},
        timeout=120,
        check=False,
    )


def normalise(text: str, *paths: Path) -> str:
    """Strip this run's temporary paths and rules hash from text a user would read."""
    for path in paths:
        text = text.replace(str(path), "<TMP>")
    return re.sub(r"\b[0-9a-f]{16}\b", "<HASH>", text)
