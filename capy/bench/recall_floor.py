"""The floor recall is measured against: a bare FTS5 table (unicode61 words, porter stems) of
the same capsule texts, queried with every word of the question OR-ed and ranked by bm25.
Nothing of capy's is in it (no stopwords, synonyms, fusion, graph or recency), so what capy
adds over plain bm25 shows as the difference. It runs in memory with the standard sqlite3
module, deliberately apart from capy's store."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable

_WORD = re.compile(r"[^\W_]+")


class Bm25Floor:
    def __init__(self, rows: Iterable[tuple[str, str, str]]) -> None:
        """`rows`: (group, key, text); a query searches one group (a conversation, a project)."""
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(
            "CREATE VIRTUAL TABLE turns USING fts5 (text, grp UNINDEXED, key UNINDEXED, "
            "tokenize = 'porter unicode61')"
        )
        self.conn.executemany("INSERT INTO turns (grp, key, text) VALUES (?, ?, ?)", rows)

    def search(self, group: str | None, question: str, limit: int) -> list[str]:
        words = dict.fromkeys(word.lower() for word in _WORD.findall(question))
        if not words:
            return []
        match = " OR ".join(f'"{word}"' for word in words)
        where, params = ("AND grp = ?", [group]) if group is not None else ("", [])
        rows = self.conn.execute(
            f"SELECT key FROM turns WHERE turns MATCH ? {where} ORDER BY bm25(turns) LIMIT ?",
            (match, *params, limit),
        )
        return [str(row[0]) for row in rows]
