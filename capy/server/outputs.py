"""The structured content of the tools a client may script, as models: each tool's
`outputSchema` is generated from its model, and the SDK checks every successful reply's
structured content against it before it leaves (a mismatch is a tool error, never a silent
drift). The text content stays what the agent reads; these carry the same facts as data.

Annotated on a tool as `Annotated[CallToolResult, Model]`: the tool still builds its own
result (text and structured content, both redacted in `capy.server.calls`).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from capy.api.stats import BYTES_PER_TOKEN


def _without_titles(schema: dict[str, Any]) -> None:
    """Pydantic's generated titles ("Exit Code") repeat the field names; every listing of the
    tools carries the schemas, so they are left out."""
    schema.pop("title", None)
    for field in schema.get("properties", {}).values():
        field.pop("title", None)


class _Closed(BaseModel):
    # additionalProperties: false in the schema, so a field added to a reply without its
    # model fails the tests instead of reaching clients undeclared.
    model_config = ConfigDict(extra="forbid", json_schema_extra=_without_titles)


# --- capy_execute, capy_execute_file -----------------------------------------------------------


class RunOutput(_Closed):
    language: str = Field(description="The language the code ran as (canonical name).")
    exit_code: int | None = Field(
        description="The exit status (128 + N when signal N ended it); null while it still runs."
    )
    outcome: str = Field(
        description=(
            "'exited' when the program ended by itself, 'running' for a background job, or what "
            "stopped it: 'timeout', 'output-cap', 'process-limit', 'memory-limit', 'cancelled'."
        )
    )
    soft_failure: bool = Field(
        description="Exit 1 read as a result (grep's 'no match'), not a crash."
    )
    status: str = Field(description="The status line the text reply opens with.")
    network: Literal["on", "off"] = Field(description="The network mode the code ran in.")
    duration_s: float = Field(description="Wall-clock seconds the run took.")
    truncated_bytes: int = Field(description="Bytes cut from the middle of the output shown.")
    pid: int | None = Field(description="The background job's process id, else null.")
    source: str | None = Field(
        description=(
            "The label the output was indexed under (search it with capy_search, "
            "include_kinds=['ephemeral']); null when the output came back whole."
        )
    )


# --- capy_search -------------------------------------------------------------------------------


class SearchHitOutput(_Closed):
    rank: int = Field(description="1 for the best hit of its query.")
    source: str = Field(description="The source label (pass it as `source` to search it alone).")
    title: str = Field(description="The section title, empty when the chunk has none.")
    kind: str = Field(description="durable, ephemeral or session; 'vault <role>' for vault hits.")
    layer: str = Field(description="What found it: porter, trigram, fuzzy or rrf (several).")
    snippet: str = Field(description="The matching part of the section.")


class _QueryResult(_Closed):
    query: str = Field(description="The query as given.")
    searched_as: str | None = Field(description="The query after fuzzy correction, if changed.")
    note: str | None = Field(description="The note the text shows under the query, if any.")


class SearchQueryOutput(_QueryResult):
    hits: list[SearchHitOutput] = Field(description="The hits the text shows, best first.")


class SearchOutput(_Closed):
    results: list[SearchQueryOutput] = Field(description="One entry per query, in order.")
    left_out: int = Field(description="Hits left out to keep the answer under its byte budget.")
    notice: str | None = Field(description="The throttle's or the vault's notice, if any.")


# --- capy_vault_search -------------------------------------------------------------------------


class VaultHitOutput(_Closed):
    rank: int = Field(description="1 for the best hit of its query.")
    session: str = Field(description="The session's label (platform:session-id).")
    title: str | None = Field(description="The session's title.")
    date: str | None = Field(description="The day the session began, YYYY-MM-DD.")
    project: str | None = Field(description="The session's working directory.")
    role: str = Field(description="The message's role (user, assistant, tool...).")
    call: str | None = Field(description="The tool call the message holds, if any.")
    snippet: str = Field(description="The matching part of the message.")


class VaultQueryOutput(_QueryResult):
    hits: list[VaultHitOutput] = Field(description="The hits the text shows, best first.")


class VaultSearchOutput(_Closed):
    vault: bool = Field(description="False when nothing has been archived on this machine yet.")
    results: list[VaultQueryOutput] = Field(description="One entry per query, in order.")
    left_out: int = Field(description="Hits left out to keep the answer under its byte budget.")


# --- capy_stats --------------------------------------------------------------------------------


class ToolTotalsOutput(_Closed):
    calls: int = Field(description="Calls made.")
    errors: int = Field(description="Calls that ended in a tool error.")
    processed_bytes: int = Field(description="Raw data the calls handled.")
    returned_bytes: int = Field(description="Text the calls returned to the context.")
    cache_hits: int = Field(description="URLs served from the fetch cache.")


class SessionTotalsOutput(ToolTotalsOutput):
    kept_out_bytes: int = Field(description="processed_bytes - returned_bytes, at least 0.")
    estimated_tokens_saved: int = Field(
        description=f"kept_out_bytes / {BYTES_PER_TOKEN}: an estimate."
    )


class SessionOutput(_Closed):
    session_id: str = Field(description="The server session's id.")
    started_at: float = Field(description="Unix time the server's session began.")
    tools: dict[str, ToolTotalsOutput] = Field(description="Per tool name.")
    total: SessionTotalsOutput = Field(description="All tools together.")


class KindOutput(_Closed):
    kind: str = Field(description="durable, ephemeral or session.")
    sources: int = Field(description="Sources of this kind.")
    raw_bytes: int = Field(description="Their stored content, in bytes.")
    tiers: dict[str, int] = Field(description="Sources per retention tier.")


class KnowledgeBaseOutput(_Closed):
    path: str = Field(description="The knowledge base file.")
    file_bytes: int = Field(description="Its size on disk.")
    wal_bytes: int = Field(description="Its write-ahead log's size.")
    chunks: int = Field(description="Searchable sections, all sources together.")
    kinds: list[KindOutput] = Field(description="Per source kind.")


class StatsOutput(_Closed):
    session: SessionOutput | None = Field(description="Null before the first tool call.")
    knowledge_base: KnowledgeBaseOutput = Field(description="What the project's store holds.")


# --- capy_doctor -------------------------------------------------------------------------------


class CheckOutput(_Closed):
    group: str = Field(description="The section it is shown under (Environment, ...).")
    name: str = Field(description="What was checked.")
    status: Literal["ok", "warn", "fail"] = Field(description="The check's verdict.")
    detail: str = Field(description="What was found.")
    fix: str | None = Field(description="What to do, for warn and fail.")


class DoctorSummaryOutput(_Closed):
    ok: int = Field(description="Checks that passed.")
    warn: int = Field(description="Checks with a warning.")
    fail: int = Field(description="Checks that failed.")


class DoctorOutput(_Closed):
    ok: bool = Field(description="False when any check failed.")
    summary: DoctorSummaryOutput = Field(description="Checks per status.")
    checks: list[CheckOutput] = Field(description="Every check, in the text's order.")


# --- capy_remember -----------------------------------------------------------------------------


class RememberOutput(_Closed):
    id: str = Field(description="The capsule's id (the SHA-256 of its canonical JSON).")
    kind: Literal["note", "decision"] = Field(description="The kind it was kept as.")
    new: bool = Field(
        description="False when a capsule of the same kind, words and tags was kept already."
    )


# --- capy_recall -------------------------------------------------------------------------------


class RecallItemOutput(_Closed):
    capsule_id: str = Field(description="The capsule's id; recall it by id for the whole text.")
    kind: str = Field(description="prompt, response, tool_call, diff, error, note or decision.")
    created_at: str = Field(description="When it happened (ISO 8601, UTC).")
    session_id: str | None = Field(description="The agent session it came from, when known.")
    project: str = Field(description="The scope's project it belongs to.")
    score: float = Field(description="Its fused score (higher ranks first).")
    lists: list[str] = Field(description="The ranked lists that found it (lexical, graph, vector).")
    folded: list[str] = Field(description="Ids of near-duplicates it stands for.")
    text: str = Field(description="The part of it that matched.")


class RecallOutput(_Closed):
    query: str = Field(description="The query as recalled.")
    budget_tokens: int = Field(description="The token budget the brief kept to.")
    tokens: int = Field(description="The brief's estimated tokens.")
    items: list[RecallItemOutput] = Field(description="Every relevant capsule, best first.")


# --- capy_memory_* -----------------------------------------------------------------------------


class MemoryRecordShown(_Closed):
    id: str = Field(description="The record's id.")
    type: Literal["rule", "anti_pattern", "preference", "principle"] = Field(
        description="The kind of lesson."
    )
    text: str = Field(description="The lesson.")
    confidence: float = Field(description="How sure capy is, 0 to 1.")
    status: Literal["candidate", "established", "deprecated", "superseded"] = Field(
        description="Where the record stands."
    )


class MemorySearchOutput(_Closed):
    records: list[MemoryRecordShown] = Field(description="The relevant records, best first.")


class MemoryRecordOutput(_Closed):
    record: MemoryRecordShown = Field(description="The record as it stands now.")
