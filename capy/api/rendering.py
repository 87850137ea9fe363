"""Search results as the agent reads them: grouped per query, bounded, best hit first.

Shared by `capy_search` and `capy_vault_search`, which differ only in how one hit reads and
what an empty result says. The structured content a client scripts against holds exactly the
hits the text shows: the byte budget protects the agent's context whichever of the two a
client hands it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capy.retrieval import SearchHit, SearchResult


def grouped_reply(
    results: Sequence[SearchResult],
    *,
    budget: int,
    render_hit: Callable[[int, SearchHit], str],
    hit_data: Callable[[int, SearchHit], dict[str, Any]],
    note: Callable[[SearchResult], str | None],
    empty: str,
) -> tuple[str, dict[str, Any]]:
    """Markdown per query, cut at whole hits once `budget` bytes are used; and the hits shown
    as data, `{"results": [{query, searched_as, note, hits}], "left_out": N}`, each hit as
    `hit_data` describes it."""
    blocks: list[str] = []
    groups: list[dict[str, Any]] = []
    used = dropped = 0
    for result in results:
        header = f"## {result.query}"
        if result.corrected_query:
            header += f"  (searched as: {result.corrected_query})"
        lines = [header]
        said = note(result)
        shown: list[dict[str, Any]] = []
        if not result.hits:
            lines.append(said or empty)
        for rank, hit in enumerate(result.hits, start=1):
            block = render_hit(rank, hit)
            size = len(block.encode("utf-8"))
            if used + size > budget and used:
                dropped += 1
                continue
            used += size
            lines.append(block)
            shown.append(hit_data(rank, hit))
        if result.hits and said:
            lines.append(f"_{said}_")
        blocks.append("\n\n".join(lines))
        groups.append(
            {
                "query": result.query,
                "searched_as": result.corrected_query,
                "note": said,
                "hits": shown,
            }
        )
    if dropped:
        blocks.append(
            f"_{dropped} more hit(s) left out to keep this answer under {budget:,} bytes; "
            "ask fewer queries per call or lower `limit`._"
        )
    return "\n\n".join(blocks), {"results": groups, "left_out": dropped}


def quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.strip("\n").splitlines())


def fuse_hits(
    lists: Sequence[Sequence[SearchHit]], *, rrf_k: int, limit: int
) -> tuple[SearchHit, ...]:
    """Reciprocal Rank Fusion of ranked hit lists from different corpora, best `limit` kept.

    The corpora are separate databases, so no hit appears in two lists: each keeps 1/(k+rank),
    and a tie goes to the earlier list.
    """
    scored = [
        (1.0 / (rrf_k + rank), order, rank, hit)
        for order, hits in enumerate(lists)
        for rank, hit in enumerate(hits, start=1)
    ]
    scored.sort(key=lambda item: (-item[0], item[1], item[2]))
    return tuple(hit for *_, hit in scored[:limit])
