"""Vectors of the session vault's messages: the knowledge base's backlog, embedding and exact
search (capy.semantic.knowledge) over the vault's own tables (its VAULT layout, migration 0005
of the vault). A session is the unit of the backlog, as a source is in the knowledge base; a
session that arrives again larger, or is reindexed, is embedded again.

Search joins the vault's fusion through `VaultCorpus.nearest`, gated by the search pack as the
knowledge base's vector list is. Role and time filters apply to each message found; a project
filter narrows the sessions searched.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from capy.retrieval.model import Candidate, SearchFilters
from capy.store.migrations import CHUNK_ORDINAL_BITS

if TYPE_CHECKING:
    from capy.rules import RuleSet
    from capy.vault import Vault
    from capy.vault.corpus import VaultCorpus


def embed_vault(
    vault: Vault,
    rules: RuleSet,
    embedder: Any,
    *,
    cpu_share: float = 1.0,
    deadline: float | None = None,
    progress: Any = None,
    stop: Any = None,
    quiet_seconds: float = 0.0,
) -> int:
    """Embed the vault's waiting sessions; the number of messages embedded."""
    from capy.semantic.knowledge import VAULT, embed_backlog, pieces_for

    chosen = pieces_for(rules)
    if chosen is None:
        return 0
    _, pieces = chosen
    return embed_backlog(
        vault,
        embedder,
        pieces,
        (),
        batch_size=rules.view("semantic").embedding.batch_size,
        cpu_share=cpu_share,
        deadline=deadline,
        progress=progress,
        stop=stop,
        quiet_seconds=quiet_seconds,
        layout=VAULT,
    )


def vault_backlog(vault: Vault, rules: RuleSet) -> tuple[int, int]:
    """(sessions waiting for vectors, their messages)."""
    from capy.semantic.knowledge import VAULT, backlog, pieces_for

    chosen = pieces_for(rules)
    if chosen is None:
        return 0, 0
    waiting = backlog(vault.conn, chosen[1].version, (), VAULT)
    return len(waiting), sum(count for _, count in waiting)


def nearest_messages(
    corpus: VaultCorpus, query: str, limit: int, filters: SearchFilters
) -> list[Candidate]:
    """Messages nearest `query` (Candidate.rank: the cosine), best first; [] without vectors
    or without the extra."""
    from capy.semantic import SemanticError, extra_installed
    from capy.semantic.knowledge import VAULT
    from capy.semantic.vector_search import nearest_in_store

    vault, rules = corpus.vault, corpus.rules
    conn = vault.conn
    if rules is None or conn.execute("SELECT 1 FROM session_vectors LIMIT 1").fetchone() is None:
        return []
    if not extra_installed():
        return []
    allowed: Callable[[], Sequence[int]] | None = None
    if corpus.scope.project:
        project = corpus.scope.project

        def allowed() -> list[int]:
            sql = "SELECT id FROM sessions WHERE instr(project, ?) > 0"
            return [row[0] for row in conn.execute(sql, (project,))]

    # Role and time are per message: ask for more, then keep those that pass.
    filtered = bool(filters.kinds or corpus.scope.after or corpus.scope.before)
    try:
        found = nearest_in_store(
            vault, rules, query, limit * 4 if filtered else limit, allowed, VAULT
        )
    except SemanticError:  # search goes on lexically; doctor and status say why
        return []
    return _read(corpus, found, filters)[:limit]


def _read(
    corpus: VaultCorpus, found: list[tuple[int, float]], filters: SearchFilters
) -> list[Candidate]:
    if not found:
        return []
    ids = [row_id for row_id, _ in found]
    rows = corpus.vault.conn.execute(
        f"""SELECT m.rowid, s.id, s.platform || ':' || s.session_id, m.role, m.title, m.body,
                   m.timestamp
              FROM messages AS m
              JOIN sessions AS s ON s.id = m.rowid >> {CHUNK_ORDINAL_BITS}
             WHERE m.rowid IN ({", ".join("?" * len(ids))})""",
        ids,
    ).fetchall()
    by_id = {row[0]: row for row in rows}
    scope = corpus.scope
    kept = []
    for row_id, score in found:
        row = by_id.get(row_id)
        if row is None:
            continue
        role, stamp = row[3], row[6] or ""
        if filters.kinds and role not in filters.kinds:
            continue
        if (scope.after and stamp < scope.after) or (scope.before and stamp >= scope.before):
            continue
        kept.append(Candidate.from_row((*row[:6], -score)))
    return kept
