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
    """What the capsule is about in a few words: its kind, then its tool, command or files.

    The command is cut as a transcript's tool-call title is (the chunking pack's
    `transcript.max_tool_input_chars`): every chunk of the capsule repeats its title, and a
    whole commit message there made each chunk of a long commit's output match what the
    message says (the capsule's content still holds the whole command once)."""
    meta = capsule.metadata
    parts = [capsule.kind.replace("_", " ")]
    if isinstance(meta.get("tool"), str) and meta["tool"]:
        parts.append(meta["tool"])
    if isinstance(meta.get("command"), str) and meta["command"].strip():
        parts.append(rules.titles.clip(meta["command"], rules.transcript.max_tool_input_chars))
    files = meta.get("files")
    if isinstance(files, list) and files:
        parts.append(" ".join(str(name) for name in files[:3]))
    return " ".join(parts)


def _title(label: str, title: str, rules: ChunkingPack) -> str:
    """The chunk's title led by the capsule's label once, within the pack's title bound."""
    clip = rules.titles.clip
    if not title or title.startswith(label):
        return clip(title or label)
    if label.startswith(title.removesuffix(rules.titles.ellipsis)):  # the label, clipped
        return clip(label)
    return clip(f"{label} - {title}")
