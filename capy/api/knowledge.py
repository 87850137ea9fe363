"""`capy_index`, `capy_search`, `capy_cleanup`: the knowledge base as tools.

Search results are markdown grouped per query, bounded by the search pack's response budget;
a progressive throttle (search pack) steers an agent that searches in a loop toward one
batched call.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from capy.api.reply import ToolInputError, ToolReply

if TYPE_CHECKING:
    from capy.api.hints import Hints
    from capy.api.workspace import Workspace
    from capy.retrieval import SearchHit, SearchResult
    from capy.rules.views.search import Throttle, ThrottleStage
    from capy.server.trigram_upkeep import TrigramCatchUp


def index_knowledge(
    workspace: Workspace,
    *,
    content: str | None = None,
    path: str | None = None,
    source: str | None = None,
    split: bool = False,
    paths: Sequence[str] | None = None,
) -> ToolReply:
    """Index content or a file (read here, so it never passes through the context) as durable;
    or, with `paths`, several files and folders in batches (`capy.api.knowledge_many`).

    Over the retention pack's per-source cap the reply says what was kept; `split` keeps all
    of it as several sources instead."""
    if paths is not None:
        if content is not None or path is not None or source is not None or split:
            raise ToolInputError(
                "give `paths` alone: content, path, source and split go with one input"
            )
        from capy.api.knowledge_many import index_paths

        return index_paths(workspace, paths)
    from capy.api.execute import path_refusal, resolve_path
    from capy.store.content import ContentError
    from capy.store.indexing import index_content
    from capy.store.intake import Intake, file_parts, kept_note, part_label, read_file_for_index

    if (content is None) == (path is None):
        raise ToolInputError("give one of content, path or paths")
    size = workspace.rules.view("retention").size
    label = source or path or "indexed content"
    # A server writes the trigram blocks just after the call (capy.store.trigram_backlog).
    catch_up = workspace.trigram_catch_up
    if path is not None:
        target = resolve_path(workspace, path)
        refusal = path_refusal(workspace, "Read", target)
        if refusal is not None:
            return ToolReply(refusal, is_error=True)
    try:
        if split:
            pieces = file_parts(target, size) if path is not None else _text_parts(content, size)
            with workspace.store() as store:
                results = [
                    index_content(
                        store,
                        part,
                        label=part_label(label, number),
                        kind="durable",
                        rules=workspace.rules,
                        defer_trigram=catch_up is not None,
                    )
                    for number, part in enumerate(pieces, 1)
                ]
            _caught_up_later(catch_up)
            return _parts_reply(results, workspace.hints)
        if path is not None:
            intake = read_file_for_index(target, size, label=label)
        else:
            text = content or ""
            intake = Intake(text, len(text.encode("utf-8")))
        with workspace.store() as store:
            result = index_content(
                store,
                intake.content,
                label=label,
                kind="durable",
                rules=workspace.rules,
                defer_trigram=catch_up is not None,
            )
        _caught_up_later(catch_up)
    except ContentError as error:
        raise ToolInputError(error.message) from None
    size_read = intake.input_bytes if intake.input_bytes is not None else result.bytes
    lines = [
        f"{result.status.capitalize()} **{result.label}** ({result.content_type}): "
        f"{result.chunk_count} chunks, {result.bytes:,} bytes stored.",
    ]
    note = kept_note(result, intake, size, keep_all=workspace.hints.split_again())
    if note:
        lines.append(note)
    if result.redactions:
        total = sum(result.redactions.values())
        lines.append(f"Redacted {total} secret(s) before storing.")
    lines.append(f"Search it with `{workspace.hints.search(source=result.label)}`.")
    return ToolReply("\n".join(lines), processed_bytes=size_read)


def _caught_up_later(catch_up: TrigramCatchUp | None) -> None:
    if catch_up is not None:
        catch_up.poke()


def _text_parts(content: str | None, size):
    import io

    from capy.store.intake import stream_parts

    return stream_parts(io.BytesIO((content or "").encode("utf-8")), size)


def _parts_reply(results: list, hints: Hints) -> ToolReply:
    stored = sum(result.bytes for result in results)
    lines = [f"Indexed {len(results)} part(s), {stored:,} bytes stored:"]
    lines.extend(
        f"- **{result.label}** ({result.content_type}): {result.status}, "
        f"{result.chunk_count} chunks, {result.bytes:,} bytes"
        for result in results
    )
    if any(result.redactions for result in results):
        total = sum(sum(result.redactions.values()) for result in results)
        lines.append(f"Redacted {total} secret(s) before storing.")
    lines.append(f"Search them with `{hints.search()}`; each part is its own source.")
    return ToolReply("\n".join(lines), processed_bytes=stored)


@dataclass(frozen=True)
class Admission:
    calls: int  # search calls in the window, this one included
    stage: ThrottleStage | None  # the throttle stage that applies, if any
    reset_seconds: int  # until the oldest call in the window leaves it


class SearchThrottle:
    """Search calls in a sliding window, per server session (the agent's context)."""

    def __init__(self) -> None:
        self._calls: deque[float] = deque()
        self._lock = threading.Lock()

    def admit(self, throttle: Throttle, now: float | None = None) -> Admission:
        now = time.monotonic() if now is None else now
        with self._lock:
            while self._calls and now - self._calls[0] >= throttle.window_seconds:
                self._calls.popleft()
            self._calls.append(now)
            calls, oldest = len(self._calls), self._calls[0]
        reset = max(int(throttle.window_seconds - (now - oldest)), 1)
        return Admission(calls, throttle.stage_for(calls), reset)


def search_knowledge(
    workspace: Workspace,
    queries: Sequence[str],
    *,
    limit: int | None = None,
    source: str | None = None,
    include_kinds: Sequence[str] | None = None,
    include_vault: bool = False,
    throttle: SearchThrottle | None = None,
) -> ToolReply:
    from capy.store.corpus import search_store

    search = workspace.rules.view("search")
    queries = [query for query in queries if query and query.strip()]
    if not queries:
        raise ToolInputError("give at least one non-empty query in `queries`")
    if len(queries) > search.limits.max_queries_per_call:
        raise ToolInputError(
            f"{len(queries)} queries in one call; the most is "
            f"{search.limits.max_queries_per_call}: split them over two calls"
        )
    if limit is not None and limit < 1:
        raise ToolInputError(f"limit must be at least 1, not {limit}")
    limit = min(limit or search.limits.default_results, search.limits.max_results)
    notice = ""
    if throttle is not None:
        admission = throttle.admit(search.throttle)
        stage = admission.stage
        if stage is not None:
            notice = stage.message.format(
                calls=admission.calls,
                window_seconds=search.throttle.window_seconds,
                reset_seconds=admission.reset_seconds,
            ).strip()
            if stage.refuses:
                return ToolReply(notice, is_error=True)
            limit = min(limit, stage.max_results)
    kinds = _kinds(workspace, include_kinds)
    with workspace.store() as store:
        try:
            results = search_store(
                store,
                queries,
                limit=limit,
                kinds=kinds,
                source=source,
                rules=workspace.rules,
                session_sources=workspace.session_sources(),
            )
        except ValueError as error:
            raise ToolInputError(str(error)) from None
    if include_vault:
        results, vault_notice = _with_vault(results, limit=limit, rrf_k=search.fusion.rrf_k)
        notice = " ".join(part for part in (notice, vault_notice) if part)
    text, data = render_results(
        results, budget=search.limits.max_response_bytes, hints=workspace.hints
    )
    if notice:
        text = f"> {notice}\n\n{text}"
    return ToolReply(text, data={**data, "notice": notice or None})


def _with_vault(
    results: list[SearchResult], *, limit: int, rrf_k: int
) -> tuple[list[SearchResult], str]:
    """Each query's hits fused with the vault's by a second Reciprocal Rank Fusion."""
    from dataclasses import replace

    from capy.api.rendering import fuse_hits
    from capy.api.vault import vault_hits
    from capy.store.errors import StoreError

    try:
        archived = vault_hits([result.query for result in results], limit=limit)
    except StoreError as error:  # the knowledge base's answers still stand
        return results, f"The session vault could not be searched: {error.message}"
    if archived is None:
        return results, "No session vault yet (run `capy vault import` to create one)."
    fused = [
        replace(result, hits=fuse_hits([result.hits, extra], rrf_k=rrf_k, limit=limit))
        for result, extra in zip(results, archived, strict=True)
    ]
    return fused, ""


def _kinds(workspace: Workspace, include_kinds: Sequence[str] | None) -> list[str] | None:
    """The default-search kinds plus those the caller adds (None: the defaults alone)."""
    if not include_kinds:
        return None
    defaults = [str(kind) for kind in workspace.rules.view("retention").kinds.default_search]
    return list(dict.fromkeys([*defaults, *include_kinds]))


def render_results(
    results: Sequence[SearchResult], *, budget: int, hints: Hints
) -> tuple[str, dict[str, Any]]:
    """The markdown the reader sees and the same hits as structured content."""
    from capy.api.rendering import grouped_reply

    def note(result: SearchResult) -> str | None:
        return note_with_hint(result, hints)

    return grouped_reply(
        results,
        budget=budget,
        render_hit=_render_hit,
        hit_data=_hit_data,
        note=note,
        empty="No matches.",
    )


def note_with_hint(result: SearchResult, hints: Hints) -> str | None:
    """The core's note on left-out kinds, with the argument (or option) that includes them."""
    if not result.note or not result.excluded_kinds:
        return result.note
    return f"{result.note}; {hints.include_kinds(result.excluded_kinds)} to search them"


def _hit_data(rank: int, hit: SearchHit) -> dict[str, Any]:
    return {
        "rank": rank,
        "source": hit.source_label,
        "title": hit.title,
        "kind": hit.kind,
        "layer": hit.layer,
        "snippet": hit.snippet,
    }


def _render_hit(rank: int, hit: SearchHit) -> str:
    from capy.api.rendering import quote

    title = f" › {hit.title}" if hit.title else ""
    return (
        f"**{rank}. {hit.source_label}{title}** _({hit.kind}, {hit.layer})_\n{quote(hit.snippet)}"
    )


def cleanup_knowledge(
    workspace: Workspace,
    *,
    dry_run: bool = True,
    source: str | None = None,
    optimize: bool = False,
    vacuum: bool = False,
) -> ToolReply:
    """Plan (and unless `dry_run`, apply) the store's cleanup: TTL, eviction, oversized."""
    from dataclasses import replace

    from capy.store.retention import apply_cleanup, plan_cleanup

    with workspace.store() as store:
        plan = plan_cleanup(store, rules=workspace.rules, source=source)
        todo = plan if not dry_run else replace(plan, items=())
        report = apply_cleanup(store, todo, optimize=optimize, vacuum=vacuum)
    lines = []
    if not plan.items:
        lines.append("Nothing to remove.")
    else:
        verb = "Would remove" if dry_run else "Removed"
        count = len(plan.items) if dry_run else len(report.removed)
        size = plan.raw_bytes if dry_run else report.raw_bytes
        lines.append(f"{verb} {count} source(s), {size:,} bytes of raw content:")
        lines.extend(
            f"- {item.label} ({item.kind}): {item.reason}, {item.raw_size:,} bytes"
            for item in plan.items
        )
        if dry_run:
            lines.append(f"This was a dry run; {workspace.hints.apply_cleanup()}.")
        elif report.skipped:
            lines.append(f"Left {len(report.skipped)} alone: used or re-indexed since the plan.")
    if report.optimized:
        lines.append("Merged the full-text index segments.")
    if report.vacuumed:
        lines.append("Vacuumed the database file.")
    lines.extend(f"Note: {note}" for note in report.notes)
    return ToolReply("\n".join(lines))
