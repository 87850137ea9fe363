"""Tool results: the text of a result block and the structured extras Claude Code records.

Claude Code writes each result twice: as a `tool_result` content block (what the model saw) and
as the line's `toolUseResult` (a structured record whose shape depends on the tool). The block is
the body; the structured record adds what the block lacks, chiefly the diff of an edit.
"""

from __future__ import annotations

from typing import Any

# Placeholder for non-text content blocks (images, documents) that have no searchable text.
_BINARY_BLOCK = "[{type}]"
# The first line of a created file's diff, as `git diff` marks one (less the file mode).
NEW_FILE = "new file"


def block_text(content: Any) -> str:
    """Text of a message's or result's content: a string, or a list of typed blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return str(content)
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            kind = str(block.get("type", ""))
            text = block.get("text")
            if isinstance(text, str):
                parts.append(text)
            elif kind and kind not in ("tool_use", "tool_result", "thinking"):
                parts.append(_BINARY_BLOCK.format(type=kind))
    return "\n".join(part for part in parts if part)


def result_shape(record: Any, *, is_error: bool) -> str:
    """Name the shape of a `toolUseResult` record, by the fields each tool writes."""
    if isinstance(record, str):
        return "error" if is_error else "text"
    if not isinstance(record, dict):
        return "error" if is_error else "text"
    if "structuredPatch" in record:
        return "patch"
    if "stdout" in record or "stderr" in record:
        return "bash"
    if "file" in record and isinstance(record.get("file"), dict):
        return "read"
    if "filenames" in record:
        return "search"
    if "url" in record and ("result" in record or "code" in record):
        return "fetch"
    if "agentId" in record or "totalToolUseCount" in record:
        return "task"
    return "error" if is_error else "text"


def result_body(block_content: Any, record: Any) -> str:
    """The result's text: the block's, or the structured record's when the block is empty."""
    text = block_text(block_content)
    if text.strip() or not isinstance(record, dict):
        return text if text.strip() or not isinstance(record, str) else record
    if "stdout" in record or "stderr" in record:
        return "\n".join(str(record.get(key) or "") for key in ("stdout", "stderr")).strip()
    if isinstance(record.get("result"), str):
        return record["result"]
    return block_text(record.get("content"))


def patch_diff(record: Any) -> str:
    """Unified-diff lines of an Edit/Write record's `structuredPatch`; a created file is all +."""
    if not isinstance(record, dict):
        return ""
    hunks = record.get("structuredPatch")
    lines: list[str] = []
    if isinstance(hunks, list):
        for hunk in hunks:
            if not isinstance(hunk, dict):
                continue
            lines.append(
                f"@@ -{hunk.get('oldStart', 0)},{hunk.get('oldLines', 0)} "
                f"+{hunk.get('newStart', 0)},{hunk.get('newLines', 0)} @@"
            )
            lines.extend(str(line) for line in hunk.get("lines") or [])
    created = record.get("type") == "create"
    if not lines and created and isinstance(record.get("content"), str):
        lines = ["+" + line for line in record["content"].splitlines()]
    # A created file opens with git's own marker, so "which new file holds X" finds the patch.
    return "\n".join([NEW_FILE, *lines] if created and lines else lines)
