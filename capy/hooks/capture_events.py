"""What each hook event captures: the prompt, a tool call (or its error, or its diff), the
turn's last response, a session boundary. Each function takes a `Capture` and spools at most one
record; the kinds, bounds and tool sets come from the capsules pack."""

from __future__ import annotations

from capy.hooks.events import describe, response_error
from capy.leanjson import dumps
from capy.packregex import glob_matches

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from capy.hooks.capture import Capture


def capture_prompt(capture: Capture) -> None:
    hook = capture.context.hook
    kind = capture.kind_for(hook.event)
    if kind and hook.prompt and hook.prompt.strip():
        capture.keep(kind, capture.bounded(hook.prompt, "prompt_chars"), {})


def capture_tool_call(capture: Capture) -> None:
    """PostToolUse and PostToolUseFailure: an error, a diff or a tool call."""
    hook = capture.context.hook
    if not hook.tool:
        return
    config = capture.config
    tool_input, response = hook.tool_input, hook.tool_response
    exit_status = _exit_status(response, config["exit_status_fields"])
    error = hook.error if hook.event == "PostToolUseFailure" else response_error(response)
    failed = hook.event == "PostToolUseFailure" or error is not None or bool(exit_status)
    command = tool_input.get("command")
    metadata: dict[str, Any] = {
        "tool": hook.native_tool or hook.tool,
        "tool_use_id": hook.tool_use_id,
        "command": command if isinstance(command, str) else None,
        "files": input_files(tool_input, config["file_fields"]),
        "exit_status": exit_status,
        "source_label": _source_label(hook.tool, response, config["source_label"]),
    }
    if failed:
        kind = capture.kind_for("PostToolUseFailure") or "error"
        content = _call_text(capture, hook.tool, tool_input, error or response, "error_chars")
    elif hook.tool in config["diff_tools"]:
        kind = "diff"
        patch = diff_text(tool_input, response, metadata["files"])
        content = capture.bounded(patch, "diff_chars")
    else:
        kind = capture.kind_for(hook.event) or "tool_call"
        content = _call_text(capture, hook.tool, tool_input, response, "tool_output_chars")
    if kind in config["kinds"] and content.strip():
        capture.keep(kind, content, metadata)


def capture_response(capture: Capture) -> None:
    """Stop: the turn's last assistant text, read from the end of the transcript."""
    from capy.hooks.transcript_tail import last_assistant_text

    hook = capture.context.hook
    kind = capture.kind_for(hook.event)
    if not kind or not hook.transcript_path:
        return
    try:
        found = last_assistant_text(
            hook.transcript_path,
            capture.config["transcript_tail_bytes"],
            capture.config["transcript"],
        )
    except FileNotFoundError:
        return  # no transcript written (yet): nothing to keep, nothing to report
    if found is None:
        return
    text, message_uuid = found
    capture.keep(kind, capture.bounded(text, "response_chars"), {"message_uuid": message_uuid})


def capture_boundary(capture: Capture) -> None:
    """SessionStart and SessionEnd: the session's edges, as notes."""
    hook = capture.context.hook
    kind = capture.kind_for(hook.event)
    if not kind:
        return
    what = "started" if hook.event == "SessionStart" else "ended"
    how = f" ({hook.source})" if hook.source else ""
    capture.keep(kind, f"Session {what}{how}.", {"tags": ["session-boundary"]})


def _call_text(
    capture: Capture, tool: str, tool_input: dict[str, Any], output: Any, bound: str
) -> str:
    shown_input = capture.bounded(_as_text(tool_input), "tool_input_chars")
    shown_output = capture.bounded(_as_text(output), bound) if output not in (None, "") else ""
    lines = [f"{tool}", f"input: {shown_input}"]
    if shown_output:
        lines.append(f"output: {shown_output}")
    return "\n".join(lines)


def _as_text(value: Any) -> str:
    """Strings as they are; an object's text fields one per line (stdout reads as written), the
    rest as compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        parts = []
        for key, item in value.items():
            if item in (None, "", [], {}):
                continue
            shown = item if isinstance(item, str) else dumps(item, ensure_ascii=False)
            parts.append(f"{key}: {shown}")
        return "\n".join(parts)
    return describe(value) or ""


def diff_text(tool_input: dict[str, Any], response: Any, files: list[str]) -> str:
    """The change as a unified diff: the platform's structured patch when it gives one (Claude
    Code's `structuredPatch`), else built from the edit's own old and new text. A file the call
    created opens with git's marker for one (Claude Code's result `type` is "create")."""
    path = files[0] if files else ""
    header = [f"--- {path}", f"+++ {path}"] if path else []
    if isinstance(response, dict) and response.get("type") == "create":
        from capy.sessions.results import NEW_FILE

        header.insert(0, NEW_FILE)
    patch = response.get("structuredPatch") if isinstance(response, dict) else None
    if isinstance(patch, list) and patch:
        return "\n".join([*header, *_hunks(patch)])
    edits = tool_input.get("edits") if isinstance(tool_input.get("edits"), list) else [tool_input]
    lines = list(header)
    for edit in edits:
        if not isinstance(edit, dict):
            continue
        old = edit.get("old_string") if isinstance(edit.get("old_string"), str) else ""
        new = edit.get("new_string")
        if not isinstance(new, str):
            new = edit.get("content") if isinstance(edit.get("content"), str) else ""
        lines.append("@@")
        lines.extend(f"-{line}" for line in old.splitlines())
        lines.extend(f"+{line}" for line in new.splitlines())
    if not lines and isinstance(tool_input.get("command"), str):
        return tool_input["command"]  # Codex's apply_patch carries the patch itself
    return "\n".join(lines)


def _hunks(patch: list[Any]) -> list[str]:
    lines = []
    for hunk in patch:
        if not isinstance(hunk, dict):
            continue
        lines.append(
            f"@@ -{hunk.get('oldStart', 0)},{hunk.get('oldLines', 0)} "
            f"+{hunk.get('newStart', 0)},{hunk.get('newLines', 0)} @@"
        )
        lines.extend(str(line) for line in hunk.get("lines", ()))
    return lines


def input_files(tool_input: dict[str, Any], fields: list[str] | tuple[str, ...]) -> list[str]:
    """The files a tool call's input names, by the capsules pack's `capture.file_fields`."""
    return [str(tool_input[key]) for key in fields if isinstance(tool_input.get(key), str)]


def _exit_status(response: Any, fields: list[str]) -> int | None:
    if not isinstance(response, dict):
        return None
    for container in (response, response.get("structuredContent")):
        if isinstance(container, dict):
            for name in fields:
                value = container.get(name)
                if isinstance(value, int) and not isinstance(value, bool):
                    return value
    return None


def _source_label(tool: str, response: Any, rule: dict[str, Any]) -> str | None:
    if not any(glob_matches(tool, pattern) for pattern in rule["tools"]):
        return None
    if not isinstance(response, dict):
        return None
    for container in (response, response.get("structuredContent")):
        if isinstance(container, dict):
            for name in rule["fields"]:
                if isinstance(container.get(name), str) and container[name]:
                    return container[name]
    return None
