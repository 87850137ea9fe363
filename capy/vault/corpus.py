"""The vault as a search corpus for the shared retrieval core (`capy.retrieval`).

Rows are messages; a "source" is a session (label `<platform>:<session id>`) and a row's "kind"
is its role, so the core's per-source diversity spreads hits over sessions and its kind filter
is the role filter. A project filter narrows to sessions whose working directory contains the
given text, a time window to messages written in it. The vault keeps no access counts: nothing
in it expires.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from capy.retrieval import Candidate, SearchFilters, SearchResult, search
from capy.retrieval.model import WorkBudget
from capy.store.budget import fetch_within
from capy.store.migrations import CHUNK_ORDINAL_BITS
from capy.store.vocabulary import known_words
from capy.vault import Vault

ROLES = ("user", "assistant", "tool", "system")
_TABLES = {"porter": "messages", "trigram": "messages_trigram"}


@dataclass(frozen=True)
class VaultScope:
    """What the retrieval core's filters cannot say: a project and a time window."""

    project: str | None = None  # text the session's working directory contains
    after: str | None = None  # ISO-8601 date or time; messages at or after it
    before: str | None = None  # messages strictly before it


class VaultCorpus:
    """Implements `capy.retrieval.Corpus` over a vault's message tables."""

    def __init__(
        self, vault: Vault, *, weights: tuple[float, float], scope: VaultScope = VaultScope()
    ) -> None:
        self.vault = vault
        self.weights = weights
        self.scope = scope

    def match(
        self,
        layer: str,
        fts_query: str,
        limit: int,
        filters: SearchFilters,
        *,
        budget: WorkBudget | None = None,
        any_of: tuple[str, ...] = (),  # every match is ranked here: nothing to skip
    ) -> list[Candidate]:
        table = _TABLES.get(layer)
        if table is None or limit < 1 or not fts_query:
            return []
        scope, params = self._scope(filters)
        # Ranked in the inner query, read in the outer one: large bodies are never sorted.
        sql = f"""
            WITH ranked AS (
                SELECT rowid AS row_id, bm25({table}, ?, ?) AS score
                  FROM {table}
                 WHERE {table} MATCH ?{scope}
                 ORDER BY score
                 LIMIT ?
            )
            SELECT ranked.row_id, s.id, s.platform || ':' || s.session_id, m.role,
                   m.title, m.body, ranked.score
              FROM ranked
              JOIN messages AS m ON m.rowid = ranked.row_id
              JOIN sessions AS s ON s.id = ranked.row_id >> {CHUNK_ORDINAL_BITS}
             ORDER BY ranked.score, ranked.row_id
        """
        query_params = (*self.weights, fts_query, *params, limit)
        rows = fetch_within(self.vault.conn, sql, query_params, budget) or []
        return [Candidate.from_row(row) for row in rows]

    def _scope(self, filters: SearchFilters) -> tuple[str, list[object]]:
        """Extra conditions on a matched rowid: its role, time and session's project."""
        conditions, params = [], []
        if filters.kinds:
            conditions.append(f"role IN ({', '.join('?' * len(filters.kinds))})")
            params += list(filters.kinds)
        if self.scope.after:
            conditions.append("timestamp >= ?")
            params.append(self.scope.after)
        if self.scope.before:
            conditions.append("timestamp < ?")
            params.append(self.scope.before)
        sql = ""
        if conditions:
            # Through the porter table, which holds role and time for both lists' rowids.
            where = " AND ".join(conditions)
            sql += f" AND rowid IN (SELECT rowid FROM messages WHERE {where})"
        if self.scope.project:
            sql += (
                f" AND (rowid >> {CHUNK_ORDINAL_BITS}) IN "
                "(SELECT id FROM sessions WHERE instr(project, ?) > 0)"
            )
            params.append(self.scope.project)
        return sql, params

    rules: Any = None  # the full rule set: the vector list reads the semantic pack

    def nearest(self, query: str, limit: int, filters: SearchFilters) -> list[Candidate]:
        """Messages nearest `query` by their vectors (see capy.semantic.vault)."""
        from capy.semantic.vault import nearest_messages

        return nearest_messages(self, query, limit, filters)

    def vocabulary_candidates(
        self, min_length: int, max_length: int, limit: int | None = None
    ) -> Iterable[str]:
        rows = self.vault.conn.execute(
            "SELECT term FROM vocabulary WHERE length(term) BETWEEN ? AND ? "
            "ORDER BY frequency DESC, term LIMIT ?",
            (max(min_length, 1), max_length, -1 if limit is None else limit),
        )
        return [row[0] for row in rows]

    def known_words(self, words: Iterable[str]) -> set[str]:
        return known_words(self.vault.conn, words)

    def inside_words(self, words: Iterable[str]) -> set[str]:
        return set(words)  # a scan of the whole vocabulary per query would cost more than it saves

    def excluded_counts(self, filters: SearchFilters) -> dict[str, int]:
        return {}  # no role is left out unless asked for

    def record_access(self, source_ids: Iterable[int]) -> None:
        return None  # nothing in the vault expires, so access counts would serve nothing


def search_vault(
    vault: Vault,
    queries: Sequence[str],
    *,
    limit: int | None = None,
    roles: Sequence[str] | None = None,
    scope: VaultScope = VaultScope(),
) -> list[SearchResult]:
    """Search the vault once per query. Raises ValueError for an unknown role or a time that
    is not ISO-8601."""
    from capy.rules import load_rules

    unknown = sorted({role for role in roles or () if role not in ROLES})
    if unknown:
        raise ValueError(f"unknown role {', '.join(map(repr, unknown))}; use {', '.join(ROLES)}")
    for name, value in (("--after", scope.after), ("--before", scope.before)):
        _check_time(name, value)
    ruleset = load_rules()
    rules = ruleset.view("search")
    corpus = VaultCorpus(
        vault, weights=(rules.bm25.title_weight, rules.bm25.content_weight), scope=scope
    )
    corpus.rules = ruleset
    filters = SearchFilters(kinds=tuple(dict.fromkeys(roles)) if roles else None)
    return [search(corpus, query, rules=rules, limit=limit, filters=filters) for query in queries]


def _check_time(name: str, value: str | None) -> None:
    """Times compare as text with the transcripts' own ISO-8601 UTC strings."""
    if value is None:
        return
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(
            f"{name} {value!r} is not a date or time; write it as 2026-01-31 or "
            "2026-01-31T14:00 (UTC)"
        ) from None


@dataclass(frozen=True)
class HitSession:
    """What a hit's message and session say about where it sits, for showing hits."""

    project: str | None  # the session's working directory
    timestamp: str  # the message's own time
    title: str | None  # the session's title
    started_at: str | None  # when the session began


def hit_sessions(vault: Vault, row_ids: Iterable[int]) -> dict[int, HitSession]:
    """Row id -> its message's time and its session's project, title and start."""
    found = {}
    for row_id in row_ids:
        row = vault.conn.execute(
            f"""SELECT s.project, m.timestamp, s.title, s.started_at FROM messages AS m
                  JOIN sessions AS s ON s.id = m.rowid >> {CHUNK_ORDINAL_BITS}
                 WHERE m.rowid = ?""",
            (row_id,),
        ).fetchone()
        if row:
            found[row_id] = HitSession(row[0], row[1] or "", row[2], row[3])
    return found


def hit_context(vault: Vault, row_ids: Iterable[int]) -> dict[int, tuple[str | None, str]]:
    """Row id -> (the session's project, the message's timestamp), for showing hits."""
    return {
        row_id: (hit.project, hit.timestamp) for row_id, hit in hit_sessions(vault, row_ids).items()
    }
