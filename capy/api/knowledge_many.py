"""`capy_index(paths=[...])`: several files or folders indexed in one call, in batches.

Each path is resolved against the project and checked by the permission rules (Read) before
anything is read, a folder's files each on their own; refused paths are named in the reply and
the rest are indexed. The reply lists every source with its status and names every file that
failed, with why; the others are indexed all the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from capy.api.reply import ToolInputError, ToolReply

if TYPE_CHECKING:
    from capy.api.workspace import Workspace

# How many sources the reply lists one by one; the rest are counted (a folder of a thousand
# files must not pour a thousand lines into the agent's context).
LISTED_SOURCES = 20


def index_paths(workspace: Workspace, paths: Sequence[str]) -> ToolReply:
    from capy.api.execute import path_refusal, resolve_path
    from capy.store.batch import BatchFailure, index_batch
    from capy.store.intake_many import FileIntakes, expand

    if not paths or not all(isinstance(path, str) and path.strip() for path in paths):
        raise ToolInputError("give `paths` as a list of file or folder paths, none of them empty")
    refused: list[str] = []
    files = []
    with workspace.store() as store:
        for path in paths:
            target = resolve_path(workspace, path)
            for file, label in expand(target, path, store.path):
                refusal = path_refusal(workspace, "Read", file)
                if refusal is None:
                    files.append((file, label))
                else:
                    refused.append(f"- **{label}**: {refusal}")
        intakes = FileIntakes(workspace.rules.view("retention").size)
        outcomes = index_batch(store, intakes.items(files), rules=workspace.rules)
    done = [outcome for outcome in outcomes if not isinstance(outcome, BatchFailure)]
    failed = [outcome for outcome in outcomes if isinstance(outcome, BatchFailure)]
    stored = sum(result.bytes for result in done)
    lines = [f"Indexed {len(done)} source(s), {stored:,} bytes stored; {len(failed)} failed."]
    lines.extend(
        f"- **{result.label}** ({result.content_type}): {result.status}, "
        f"{result.chunk_count} chunks, {result.bytes:,} bytes"
        for result in done[:LISTED_SOURCES]
    )
    if len(done) > LISTED_SOURCES:
        lines.append(f"- and {len(done) - LISTED_SOURCES} more")
    if failed or refused:
        lines.append("Not indexed:")
        lines.extend(f"- **{failure.label}**: {failure.message}" for failure in failed)
        lines.extend(refused)
    redacted = sum(sum(result.redactions.values()) for result in done)
    if redacted:
        lines.append(f"Redacted {redacted} secret(s) before storing.")
    if any(result.omitted_bytes for result in done):
        lines.append(
            "Some files were over the per-source cap and kept their start and end; to keep all "
            f"of one, {workspace.hints.split_again()} and its `path`."
        )
    if done:
        lines.append(f"Search them with `{workspace.hints.search()}`; each file is its own source.")
    return ToolReply("\n".join(lines), processed_bytes=stored, is_error=not done)
