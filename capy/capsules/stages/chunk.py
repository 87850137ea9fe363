"""The chunk stage: a capsule's content cut by the chunking pack into the capsule FTS tables.

Chunk rowids are `chunk_rowid(capsule n, ordinal)` in both tables, so a capsule's chunks are one
rowid range, replaced with a range delete. A chunk's title names the capsule's kind and, where
the metadata has them, its tool or command, so a query for "the pytest run" finds the tool call
even when the output does not say pytest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capy.capsules.model import Capsule
from capy.capsules.sqlite.derived import clear_chunks, write_chunks
from capy.capsules.stages import StageContext

if TYPE_CHECKING:
    from capy.rules.views.chunking import ChunkingPack


def run(context: StageContext, n: int, capsule: Capsule) -> int:
    """Replace capsule `n`'s chunks; the number written."""
    from capy.chunking import chunk_text

    clear_chunks(context.conn, n)
    if capsule.forgotten:
        return 0
    rules = context.rules.view("chunking")
    label = capsule_label(capsule, rules)
    chunks = chunk_text(capsule.content, label=label, rules=rules)
    pieces = [(_title(label, chunk.title, rules), chunk.content) for chunk in chunks]
    write_chunks(context.conn, n, pieces, context.version)
    return len(pieces)


def capsule_label(capsule: Capsule, rules: ChunkingPack) -> str:
    """What the capsule is about in a few words: its kind, then the call it records (its
    command, else a tool call's first line, where the transcript backfill puts the call's
    one-line summary: the subagent's task, the URL, the query, the file), then its files.

    Every chunk of the capsule repeats this label in its title, so the call stays with each
    part of a long result (a subagent's report, a fetched page, a diff's hunks), whose own
    first chunk is often only that line. The call is cut as a transcript's tool-call title is
    (the chunking pack's `transcript.max_tool_input_chars`): a whole commit message there made
    each chunk of a long commit's output match what the message says (the capsule's content
    still holds all of it once)."""
    meta = capsule.metadata
    tool = meta.get("tool") if isinstance(meta.get("tool"), str) else ""
    command = meta.get("command") if isinstance(meta.get("command"), str) else ""
    first = capsule.content.strip().split("\n", 1)[0] if tool else ""
    call = command or (first if first.strip() != tool else "")  # hook capture leads with the tool
    call = rules.titles.clip(call, rules.transcript.max_tool_input_chars) if call.strip() else ""
    parts = [capsule.kind.replace("_", " ")]
    if tool and not call.startswith(tool):
        parts.append(tool)
    if call:
        parts.append(call)
    files = meta.get("files")
    if isinstance(files, list) and files:
        parts += [str(name) for name in files[:3] if str(name) not in call]
    return " ".join(parts)


def _title(label: str, title: str, rules: ChunkingPack) -> str:
    """The chunk's title led by the capsule's label once, within the pack's title bound."""
    clip = rules.titles.clip
    if not title or title.startswith(label):
        return clip(title or label)
    if label.startswith(title.removesuffix(rules.titles.ellipsis)):  # the label, clipped
        return clip(label)
    return clip(f"{label} - {title}")
