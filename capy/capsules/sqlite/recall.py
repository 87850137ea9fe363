"""What recall reads on SQLCipher: the capsule chunks as a retrieval `Corpus`, the entity graph
around a query's entities, and the summaries of a session.

The corpus's "sources" are capsules (a chunk's source id is its capsule's `n`), so the core's
per-source diversity spreads results over capsules. A `RecallScope` narrows every list to one
scope's live capsules, some kinds and a time window; the condition is left out when it cannot
exclude anything, because testing each matching chunk costs as much as ranking it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import sqlcipher3

from capy.capsules.model import Scope
from capy.retrieval import Candidate, SearchFilters
from capy.retrieval.model import WorkBudget
from capy.store.database import read_snapshot
from capy.store.disjunction import ranked_top
from capy.store.migrations import CHUNK_ORDINAL_BITS

_TABLES = {"porter": "capsule_chunks", "trigram": "capsule_chunks_trigram"}
CAPSULE_KIND = "capsule"


@dataclass(frozen=True)
class RecallScope:
    """Which capsules recall may return: one scope's (None: every scope's), some kinds (None:
    all), written at or after a Unix time (None: any time)."""

    scope: Scope | None = None
    kinds: tuple[str, ...] | None = None
    since_ts: float | None = None

    def condition(self, conn: sqlcipher3.Connection, column: str) -> tuple[str, list[object]]:
        """A SQL condition on a capsule number `column` ("1" when nothing is excluded)."""
        parts, params = ["k.forgotten_reason IS NULL"], []
        if self.scope is not None and _only_scope(conn) != self.scope:
            parts.append("k.tenant = ? AND k.project = ?")
            params += [self.scope.tenant, self.scope.project]
        if self.kinds is not None:
            parts.append(f"k.kind IN ({_marks(self.kinds)})")
            params += list(self.kinds)
        if self.since_ts is not None:
            parts.append("k.created_ts >= ?")
            params.append(self.since_ts)
        if len(parts) == 1:
            return "1", []  # forgotten capsules have no chunks, mentions or vectors
        where = " AND ".join(parts)
        return f"EXISTS (SELECT 1 FROM capsules AS k WHERE k.n = {column} AND {where})", params


def in_scope(conn: sqlcipher3.Connection, scope: RecallScope, numbers: Sequence[int]) -> set[int]:
    """Which of the capsule `numbers` the scope allows."""
    condition, params = scope.condition(conn, "c.n")
    found: set[int] = set()
    for start in range(0, len(numbers), 500):
        part = list(numbers[start : start + 500])
        rows = conn.execute(
            f"SELECT c.n FROM capsules AS c WHERE c.n IN ({_marks(part)}) AND {condition}",
            [*part, *params],
        )
        found.update(int(row[0]) for row in rows)
    return found


def _only_scope(conn: sqlcipher3.Connection) -> Scope | None:
    """The log's one scope, None when it has several or none."""
    rows = conn.execute("SELECT tenant, project FROM capsule_heads LIMIT 2").fetchall()
    return Scope(str(rows[0][1]), str(rows[0][0])) if len(rows) == 1 else None


class CapsuleCorpus:
    """Implements `capy.retrieval.Corpus` over the capsule chunk tables.

    An OR pass starts from its rare phrases (`capy.store.disjunction.top_of_any`, with the
    search pack's `bm25.essential_rows`): on a large log the common words of a question ("go",
    a speaker's name) match tens of thousands of chunks, and scoring each cost most of a recall
    (100,000 capsules: 25 of 48 ms of CPU). The top it returns is the exact bm25 top; no
    window is applied, so recall ranks every match as before."""

    def __init__(
        self,
        conn: sqlcipher3.Connection,
        scope: RecallScope,
        *,
        weights: tuple[float, float],
        essential_rows: int = 0,
        window: int | None = None,
    ) -> None:
        self.conn = conn
        self.scope = scope
        self.weights = weights
        self.essential_rows = essential_rows
        self.window = window
        self._conditions: dict[str, tuple[str, list[object]]] = {}  # by table

    def match(
        self,
        layer: str,
        fts_query: str,
        limit: int,
        filters: SearchFilters,
        *,
        budget: WorkBudget | None = None,
        any_of: tuple[str, ...] = (),
    ) -> list[Candidate]:
        table = _TABLES.get(layer)
        if table is None or limit < 1 or not fts_query:
            return []
        with read_snapshot(self.conn):
            top = ranked_top(
                self.conn,
                table,
                self.weights,
                self._condition(table),
                fts_query,
                any_of,
                limit,
                window=self.window,
                essential_rows=self.essential_rows,
                budget=budget,
                database=_database(self.conn),
            )
            return self._read(top or [])

    def _condition(self, table: str) -> tuple[str, list[object]]:
        """The scope as SQL on `table`'s rows, made once per table."""
        condition = self._conditions.get(table)
        if condition is None:
            column = f"({table}.rowid >> {CHUNK_ORDINAL_BITS})"
            condition = self._conditions[table] = self.scope.condition(self.conn, column)
        return condition

    def _read(self, top: list[tuple[int, float]]) -> list[Candidate]:
        """The ranked rows as candidates, in their order (large chunks are read for the few
        rows kept, never sorted)."""
        if not top:
            return []
        ids = [rowid for rowid, _ in top]
        # Either list's text is read from the porter table: the trigram table stores none.
        rows = self.conn.execute(
            f"SELECT rowid, title, content FROM capsule_chunks WHERE rowid IN ({_marks(ids)})",
            ids,
        ).fetchall()
        by_id = {int(row[0]): row for row in rows}
        return [
            Candidate.from_row(
                (rowid, rowid >> CHUNK_ORDINAL_BITS, "", CAPSULE_KIND, *by_id[rowid][1:], score)
            )
            for rowid, score in top
            if rowid in by_id
        ]

    def vocabulary_candidates(
        self, min_length: int, max_length: int, limit: int | None = None
    ) -> Iterable[str]:
        return ()  # no vocabulary table: recall does not correct typos

    def known_words(self, words: Iterable[str]) -> set[str]:
        return set(words)  # unknown without a vocabulary: the trigram list stays optional

    def inside_words(self, words: Iterable[str]) -> set[str]:
        return set(words)

    def excluded_counts(self, filters: SearchFilters) -> dict[str, int]:
        return {}

    def record_access(self, source_ids: Iterable[int]) -> None:
        return None  # capsules never expire: access counts would serve nothing


def entities_named(
    conn: sqlcipher3.Connection, names: Sequence[str], limit: int
) -> list[tuple[int, str]]:
    """(id, name) of the entities whose name is one of `names` (any case, any type)."""
    found: dict[int, str] = {}
    for start in range(0, len(names), 400):
        part = list(names[start : start + 400])
        rows = conn.execute(
            f"SELECT id, name FROM entities WHERE name COLLATE NOCASE IN ({_marks(part)}) "
            "ORDER BY id",
            part,
        )
        found.update((int(i), str(n)) for i, n in rows)
    return sorted(found.items())[:limit]


def mention_counts(conn: sqlcipher3.Connection, entity_ids: Sequence[int]) -> dict[int, int]:
    """How many capsules mention each entity."""
    if not entity_ids:
        return {}
    rows = conn.execute(
        "SELECT entity_id, count(*) FROM capsule_entities "
        f"WHERE entity_id IN ({_marks(entity_ids)}) GROUP BY entity_id",
        list(entity_ids),
    )
    return {int(i): int(c) for i, c in rows}


def neighbours(
    conn: sqlcipher3.Connection, entity_ids: Sequence[int], limit: int
) -> list[tuple[int, float]]:
    """The entities one edge away from `entity_ids`, heaviest edge first, at most `limit`."""
    if not entity_ids or limit < 1:
        return []
    marks = _marks(entity_ids)
    rows = conn.execute(
        f"""SELECT other, max(weight) AS w FROM (
                SELECT b AS other, weight FROM entity_edges WHERE a IN ({marks})
                UNION ALL
                SELECT a AS other, weight FROM entity_edges WHERE b IN ({marks}))
             WHERE other NOT IN ({marks})
             GROUP BY other ORDER BY w DESC, other LIMIT ?""",
        (*entity_ids, *entity_ids, *entity_ids, limit),
    )
    return [(int(other), float(weight)) for other, weight in rows]


def capsules_mentioning(
    conn: sqlcipher3.Connection, entity_ids: Sequence[int], scope: RecallScope, limit: int
) -> list[tuple[int, int]]:
    """(capsule n, how many of `entity_ids` it mentions) in scope, most first, then newest."""
    if not entity_ids or limit < 1:
        return []
    condition, params = scope.condition(conn, "m.capsule_n")
    rows = conn.execute(
        f"""SELECT m.capsule_n, count(*) AS hits FROM capsule_entities AS m
             WHERE m.entity_id IN ({_marks(entity_ids)}) AND {condition}
             GROUP BY m.capsule_n ORDER BY hits DESC, m.capsule_n DESC LIMIT ?""",
        (*entity_ids, *params, limit),
    )
    return [(int(n), int(hits)) for n, hits in rows]


def session_summary(
    conn: sqlcipher3.Connection, scope: Scope, session_id: str, seq: int
) -> str | None:
    """The lowest-level summary of `session_id` covering capsule `seq` (or the session's
    highest one), None when the session has none."""
    row = conn.execute(
        "SELECT content FROM summaries WHERE tenant = ? AND project = ? AND session_id = ? "
        "ORDER BY (first_seq <= ? AND last_seq >= ?) DESC, "
        "CASE WHEN first_seq <= ? AND last_seq >= ? THEN level ELSE -level END, first_seq "
        "LIMIT 1",
        (scope.tenant, scope.project, session_id, seq, seq, seq, seq),
    ).fetchone()
    return None if row is None else str(row[0])


def _database(conn: sqlcipher3.Connection) -> str:
    """The log's file, which keys the cache of phrase counts."""
    row = conn.execute("PRAGMA database_list").fetchone()
    return str(row[2]) if row is not None else ""


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values))


def session_neighbours(
    conn: sqlcipher3.Connection, numbers: Sequence[int], reach: int, scope: RecallScope
) -> dict[int, list[tuple[int, int]]]:
    """For each capsule n, up to `reach` capsules of its session just before it and just
    after it, each with its place from n (-1: the one just before; nearest first, earlier
    before later at the same distance); none for a capsule without a session.

    Places count the session's own capsules: when two sessions of a project write at once,
    their capsules interleave in the scope's order, and a window over that order would spend
    its reach on the other session's. Within a scope, capsule numbers grow with `seq`, so the
    session index (session_id, n) gives each side in order, a few rows read."""
    if not numbers or reach < 1:
        return {}
    condition, params = scope.condition(conn, "o.n")
    found: dict[int, list[tuple[int, int]]] = {n: [] for n in numbers}
    targets = conn.execute(
        f"SELECT n, tenant, project, session_id FROM capsules "
        f"WHERE n IN ({_marks(numbers)}) AND session_id IS NOT NULL",
        list(numbers),
    ).fetchall()
    side = (
        "SELECT o.n FROM capsules AS o WHERE o.session_id = ? AND o.tenant = ? "
        "AND o.project = ? AND o.n {} ? AND o.forgotten_reason IS NULL AND {} "
        "ORDER BY o.n {} LIMIT ?"
    )
    earlier_sql = side.format("<", condition, "DESC")
    later_sql = side.format(">", condition, "ASC")
    for n, tenant, project, session_id in targets:
        key = (session_id, tenant, project, n)
        earlier = [row[0] for row in conn.execute(earlier_sql, (*key, *params, reach))]
        later = [row[0] for row in conn.execute(later_sql, (*key, *params, reach))]
        for place in range(reach):
            if place < len(earlier):
                found[int(n)].append((int(earlier[place]), -(place + 1)))
            if place < len(later):
                found[int(n)].append((int(later[place]), place + 1))
    return found


def contents(conn: sqlcipher3.Connection, numbers: Sequence[int]) -> dict[int, str]:
    """The text of each of the capsules `numbers` (a handful: the best-ranked ones)."""
    if not numbers:
        return {}
    rows = conn.execute(
        f"SELECT n, content FROM capsules WHERE n IN ({_marks(numbers)})", list(numbers)
    )
    return {int(n): str(text or "") for n, text in rows}
