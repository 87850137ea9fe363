"""Backfill from the session vault: every archived session's messages as capsules, with their
original timestamps and session ids (`capy capsules import --from-vault`).

A person's prompt is a `prompt`, the agent's text a `response`, each tool call a `tool_call`
(its one-line summary and the start of its output, `archive.backfill_output_chars` of it; the
rest stays in the vault), a file change (`capture.diff_tools`) a `diff` holding its patch, as the
hook capture keeps it (a change is recalled by what it changed, not by "updated successfully"),
and a failed call an `error`. Harness text (slash-command echoes,
injected skills, compaction summaries) is not an event of the session and is left out.
A second backfill adds nothing: capsule ids hash the original time and text, and an event the
log already holds from a backfill (its session, kind and tool call or transcript line) is left
out even when capy now renders it otherwise (a summary reworded, a diff's header added).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from capy.capsules.model import CapsuleDraft, Scope

if TYPE_CHECKING:
    from capy.capsules import CapsuleStore
    from capy.capsules.importing import ImportReport
    from capy.rules.views.capsules import CapsulesPack
    from capy.rules.views.transcripts import TranscriptsPack
    from capy.sessions.model import Message, Session, ToolCall, ToolResult
    from capy.vault import Vault

Progress = Callable[[int, int], None]
BACKFILL_SOURCE = "import"


@dataclass
class BackfillReport:
    sessions: int = 0
    unreadable: int = 0  # sessions whose archived files could not be parsed
    too_large: int = 0  # messages over the capsule content limit: they stay in the vault only
    imported: ImportReport | None = None


def backfill_from_vault(
    store: CapsuleStore, vault: Vault, progress: Progress | None = None
) -> BackfillReport:
    from capy.capsules.importing import import_drafts
    from capy.vault.archived import parse_archived
    from capy.vault.errors import CorruptBlobError

    pack = store.rules.view("capsules")
    limit = pack.limits.max_content_bytes
    report = BackfillReport()
    drafts: list[tuple[str, CapsuleDraft]] = []
    rowids = [row[0] for row in vault.conn.execute("SELECT id FROM sessions ORDER BY id")]
    for done, rowid in enumerate(rowids, 1):
        try:
            session = parse_archived(vault.conn, rowid, store.rules)
        except CorruptBlobError:
            report.unreadable += 1
            continue
        report.sessions += 1
        for draft in session_drafts(session, pack, store.rules.view("transcripts")):
            if len(draft.content.encode("utf-8")) > limit:
                report.too_large += 1
                continue
            drafts.append((f"session {session.session_id}", draft))
        if progress is not None:
            progress(done, len(rowids))
    fresh = _unrecorded(store, drafts)
    report.imported = import_drafts(store, fresh)
    report.imported.read += len(drafts) - len(fresh)
    report.imported.known += len(drafts) - len(fresh)
    return report


def _unrecorded(
    store: CapsuleStore, drafts: list[tuple[str, CapsuleDraft]]
) -> list[tuple[str, CapsuleDraft]]:
    """The drafts whose event no earlier backfill put in the log."""
    sessions = {str(draft.metadata.get("session_id")) for _, draft in drafts}
    recorded = store.backend.recorded_events(BACKFILL_SOURCE, sessions)
    return [(where, draft) for where, draft in drafts if _event_key(draft) not in recorded]


def _event_key(draft: CapsuleDraft) -> tuple[str, str, str] | None:
    meta = draft.metadata
    event = meta.get("tool_use_id") or meta.get("message_uuid")
    return (str(meta.get("session_id")), draft.kind, str(event)) if event else None


def session_drafts(
    session: Session, pack: CapsulesPack, transcripts: TranscriptsPack
) -> Iterator[CapsuleDraft]:
    """A session's (and its subagents') capsules in transcript order. Sidecars the transcripts
    pack does not index are left out, as the vault leaves them out: the compaction agent's
    restates the whole session (its prompt is the harness's instructions, its reply a recap),
    so its capsules outranked the events they retell."""
    bounds = _Bounds(
        pack.archive.backfill_output_chars,
        frozenset(pack.capture.diff_tools),
        pack.capture.bounds.diff_chars,
        pack.capture.bounds.error_chars,
        tuple(pack.capture.file_fields),
    )
    scope = Scope(session.cwd) if session.cwd else None
    base: dict[str, Any] = {"session_id": session.session_id, "platform": session.platform}
    if session.git_branch:
        base["branch"] = session.git_branch
    parts = [session] + [
        part for part in session.sidecars if transcripts.claude.indexes_sidecar(part.path.name)
    ]
    for part in parts:
        extra = {"agent_id": part.agent_id} if part.agent_id else {}
        results = {m.result.call_id: m.result for m in part.messages if m.result is not None}
        called = {call.call_id for m in part.messages for call in m.tool_calls}
        last_time = part.started_at or session.started_at
        for message in part.messages:
            last_time = message.timestamp or last_time
            for kind, content, metadata in _events(message, results, called, bounds):
                if content.strip() and last_time:  # an undated event has no place in time
                    yield CapsuleDraft(
                        kind=kind,
                        content=content,
                        source=BACKFILL_SOURCE,
                        metadata={**base, **extra, **_line(message), **metadata},
                        created_at=last_time,
                        scope=scope,
                    )


def _line(message: Message) -> dict[str, Any]:
    return {"message_uuid": message.message_id} if message.message_id else {}


@dataclass(frozen=True)
class _Bounds:
    output_chars: int
    diff_tools: frozenset[str]
    diff_chars: int
    error_chars: int
    file_fields: tuple[str, ...]  # tool input fields naming the file a call touches


def _events(
    message: Message, results: dict[str, ToolResult], called: set[str], bounds: _Bounds
) -> Iterator[tuple[str, str, dict[str, Any]]]:
    if message.kind == "prompt":
        yield "prompt", message.text, {}
    elif message.kind == "reply":
        yield "response", message.text, {}
        for call in message.tool_calls:
            result = results.get(call.call_id)
            metadata: dict[str, Any] = {"tool": call.tool, "tool_use_id": call.call_id}
            command = call.input.get("command")
            if isinstance(command, str):
                metadata["command"] = command
            # The file a call touches, as hook capture records it: the chunk stage names it in
            # every chunk's title, so "the edit to hooks_controller" finds the patch's middle.
            from capy.hooks.capture_events import input_files

            files = input_files(call.input, bounds.file_fields)
            if files:
                metadata["files"] = files
            failed = result is not None and result.is_error
            if call.tool in bounds.diff_tools and not failed:
                patch = _patch(call, result)[: bounds.diff_chars]
                yield "diff", f"{call.summary}\n\n{patch}".strip(), metadata
                continue
            # A failed call is one `error` at its call's place, as hook capture records it
            # (PostToolUseFailure): kept also as a tool call, it was a near-duplicate that
            # took a place in the session, pushing the reply that reacts to it out of reach.
            kind, limit = (
                ("error", bounds.error_chars) if failed else ("tool_call", bounds.output_chars)
            )
            output = result.text[:limit] if result is not None else ""
            yield kind, f"{call.summary}\n\n{output}".strip(), metadata
    elif (
        message.result is not None
        and message.result.is_error
        and message.result.call_id not in called
    ):
        result = message.result
        metadata = {"tool": result.tool, "tool_use_id": result.call_id} if result.tool else {}
        yield "error", f"{result.summary}\n\n{result.text}".strip(), metadata


def _patch(call: ToolCall, result: ToolResult | None) -> str:
    """The change as the hook capture records it: the transcript's structured patch when the
    result carries one, else built from the edit's own old and new text."""
    from capy.hooks.capture_events import diff_text

    if result is not None and result.diff:
        return result.diff
    return diff_text(call.input, None, [])
