"""`capy_vault_search`: past agent sessions (the vault) as a tool.

Results are markdown grouped per query: each hit names its session (title, date, project), the
message's role and a snippet, bounded by the search pack's response budget. Without a vault
the answer says how to create one; that is not an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from capy.api.reply import ToolInputError, ToolReply

if TYPE_CHECKING:
    from capy.api.workspace import Workspace
    from capy.retrieval import SearchHit, SearchResult
    from capy.vault.corpus import HitSession


def vault_search_reply(
    workspace: Workspace,
    queries: Sequence[str],
    *,
    limit: int | None = None,
    project: str | None = None,
    after: str | None = None,
    before: str | None = None,
) -> ToolReply:
    """Search archived sessions once per query; `project`, `after`, `before` narrow them."""
    from capy.api.workspace import _quiet
    from capy.store.errors import StoreError
    from capy.vault import locate_vault, open_vault
    from capy.vault.corpus import VaultScope, hit_sessions, search_vault

    limits = workspace.rules.view("search").limits
    queries = [query for query in queries if query and query.strip()]
    if not queries:
        raise ToolInputError("give at least one non-empty query in `queries`")
    if len(queries) > limits.max_queries_per_call:
        raise ToolInputError(
            f"{len(queries)} queries in one call; the most is {limits.max_queries_per_call}: "
            "split them over two calls"
        )
    if limit is not None and limit < 1:
        raise ToolInputError(f"limit must be at least 1, not {limit}")
    location = locate_vault()
    if not location.path.is_file():
        return ToolReply(
            "No session vault yet: nothing has been archived on this machine. Run "
            "`capy vault import` in a terminal to archive past Claude Code and Codex sessions, "
            "then search again.",
            data={"vault": False, "results": [], "left_out": 0},
        )
    scope = VaultScope(project=project, after=after, before=before)
    try:
        with open_vault(location.path, notify=_quiet) as vault:
            results = search_vault(
                vault,
                queries,
                limit=min(limit or limits.default_results, limits.max_results),
                scope=scope,
            )
            sessions = hit_sessions(vault, [hit.chunk_id for r in results for hit in r.hits])
    except ValueError as error:
        raise ToolInputError(str(error)) from None
    except StoreError as error:
        return ToolReply(error.message, is_error=True)
    text, data = render_vault_results(results, sessions, budget=limits.max_response_bytes)
    return ToolReply(text, data={"vault": True, **data})


def render_vault_results(
    results: Sequence[SearchResult], sessions: dict[int, HitSession], *, budget: int
) -> tuple[str, dict[str, Any]]:
    """Markdown per query, best hit first, cut at whole hits once `budget` bytes are used; and
    the hits shown, as structured content."""
    from capy.api.rendering import grouped_reply

    return grouped_reply(
        results,
        budget=budget,
        render_hit=lambda rank, hit: _render_hit(rank, hit, sessions.get(hit.chunk_id)),
        hit_data=lambda rank, hit: _hit_data(rank, hit, sessions.get(hit.chunk_id)),
        note=lambda result: result.note,
        empty="No matches in the archived sessions.",
    )


def _hit_data(rank: int, hit: SearchHit, where: HitSession | None) -> dict[str, Any]:
    return {
        "rank": rank,
        "session": hit.source_label,
        "title": (where.title if where else None) or None,
        "date": (_day(where.started_at or where.timestamp) if where else "") or None,
        "project": where.project if where else None,
        "role": hit.kind,
        "call": hit.title or None,
        "snippet": hit.snippet,
    }


def _render_hit(rank: int, hit: SearchHit, where: HitSession | None) -> str:
    from capy.api.rendering import quote

    title = (where.title if where else None) or hit.source_label
    facts = [_day(where.started_at or where.timestamp) if where else "", where and where.project]
    facts_text = " · ".join(fact for fact in facts if fact)
    head = f"**{rank}. {title}**" + (f" — {facts_text}" if facts_text else "")
    call = f" › {hit.title}" if hit.title else ""
    lines = [head, f"`{hit.source_label}` _{hit.kind}_{call}"]
    if hit.snippet.strip():
        lines.append(quote(hit.snippet))
    return "\n".join(lines)


def _day(timestamp: str | None) -> str:
    return (timestamp or "")[:10]


def vault_hits(queries: Sequence[str], *, limit: int) -> list[tuple[SearchHit, ...]] | None:
    """Per query, the vault's best hits labelled as vault hits (for fusing into capy_search);
    None when there is no vault on this machine yet."""
    from dataclasses import replace

    from capy.api.workspace import _quiet
    from capy.vault import locate_vault, open_vault
    from capy.vault.corpus import hit_sessions, search_vault

    location = locate_vault()
    if not location.path.is_file():
        return None
    with open_vault(location.path, notify=_quiet) as vault:
        results = search_vault(vault, queries, limit=limit)
        sessions = hit_sessions(vault, [hit.chunk_id for r in results for hit in r.hits])
    labelled = []
    for result in results:
        hits = []
        for hit in result.hits:
            where = sessions.get(hit.chunk_id)
            title = (where.title if where else None) or hit.source_label
            day = _day(where.started_at or where.timestamp) if where else ""
            label = f"vault › {title}" + (f" ({day})" if day else "")
            hits.append(replace(hit, source_label=label, kind=f"vault {hit.kind}"))
        labelled.append(tuple(hits))
    return labelled
