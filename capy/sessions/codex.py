"""Codex rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) to a Session.

Every line is `{timestamp, type, payload}`. `session_meta` opens the file (id, cwd, CLI version,
git); `turn_context` carries the model; `response_item` lines are the conversation: messages,
tool calls (`function_call` with JSON-string arguments, `custom_tool_call` with free-form input,
`local_shell_call`, `web_search_call`) and their outputs, paired by `call_id`. Which line and
payload types are read, and the canonical tool names, come from the transcripts pack.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from capy.rules.views.transcripts import TranscriptsPack
from capy.sessions.model import Compaction, Session, ToolCall, ToolResult
from capy.sessions.reader import (
    UNPARSABLE_LINE,
    MessageLog,
    json_records,
    read_raw_lines,
    text_field,
)
from capy.sessions.results import block_text

PLATFORM = "codex"
# Older CLIs wrap a shell call's output as JSON {output, metadata: {exit_code}}; newer ones
# write plain text opening with this line.
_EXIT_CODE_LINE = re.compile(r"\AExit code: (-?\d+)")
# apply_patch bodies name each file on a header line.
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)
# A shell call's argv is usually ["bash", "-lc", "<script>"]: the script is the command.
_SHELL_SCRIPT_FLAGS = ("-lc", "-c")


def parse_codex(path: Path, pack: TranscriptsPack, *, max_bytes: int | None = None) -> Session:
    raw_lines, truncated = read_raw_lines(path, max_bytes)
    session = Session(platform=PLATFORM, session_id=path.stem, path=path, raw_lines=raw_lines)
    session.report.truncated = truncated
    builder = _Builder(session, pack)
    for number, record in json_records(raw_lines, session.report):
        builder.add(number, record)
    return session


class _Builder(MessageLog):
    def __init__(self, session: Session, pack: TranscriptsPack) -> None:
        super().__init__(session)
        self.pack = pack
        self.calls: dict[str, ToolCall] = {}

    def add(self, number: int, record: dict[str, Any]) -> None:
        kind = str(record.get("type"))
        payload = record.get("payload") if isinstance(record.get("payload"), dict) else {}
        lines = self.pack.codex
        handling = lines.handling(record)
        if kind == "compacted":
            summary = text_field(payload.get("message"))
            timestamp = text_field(record.get("timestamp")) or None
            self.session.compactions.append(Compaction(number, timestamp, None, summary))
        if handling == "meta":
            self._take_metadata(payload)
        elif handling == "read":
            self._read(number, record, payload)
        else:
            self.session.report.skipped[kind] += 1
            if kind not in lines.line_types:
                self.session.report.unknown[kind] += 1

    def _take_metadata(self, payload: dict[str, Any]) -> None:
        session = self.session
        if isinstance(payload.get("id"), str) and session.session_id == session.path.stem:
            session.session_id = payload["id"]
        session.cwd = session.cwd or text_field(payload.get("cwd")) or None
        session.version = session.version or text_field(payload.get("cli_version")) or None
        session.model = session.model or text_field(payload.get("model")) or None
        git = payload.get("git")
        if isinstance(git, dict):
            session.git_branch = session.git_branch or text_field(git.get("branch")) or None

    def _read(self, number: int, record: dict[str, Any], payload: dict[str, Any]) -> None:
        payload_type = str(payload.get("type"))
        what = self.pack.codex.payload_types.get(payload_type, "skip")
        if what == "message":
            self._message(number, record, payload)
        elif what == "tool_call":
            self._tool_call(number, record, payload)
        elif what == "tool_result":
            self._tool_result(number, record, payload)
        else:
            self.session.report.skipped[f"response_item/{payload_type}"] += 1

    def _message(self, number: int, record: dict[str, Any], payload: dict[str, Any]) -> None:
        role = text_field(payload.get("role"))
        text = block_text(payload.get("content"))
        if role == "assistant":
            self._append(
                "assistant", "reply", self.pack.strip_noise(text, "assistant"), number, record
            )
        elif role == "user":
            text = self.pack.strip_noise(text, "user")
            if text:
                self._append("user", "prompt", text, number, record)
        elif text.strip():
            self._append("system", "meta", text, number, record)  # developer instructions

    def _tool_call(self, number: int, record: dict[str, Any], payload: dict[str, Any]) -> None:
        name = text_field(payload.get("name")) or text_field(payload.get("type"))
        tool = self.pack.codex.canonical_tool(name)
        tool_input = canonical_input(tool, _raw_input(payload))
        call_id = text_field(payload.get("call_id")) or text_field(payload.get("id"))
        call = ToolCall(call_id, tool, tool_input, self.pack.summarize(tool, tool_input))
        if call_id:
            self.calls[call_id] = call
        # Codex writes each call as its own line; consecutive calls join the reply before them.
        last = self.session.messages[-1] if self.session.messages else None
        if last is None or last.role != "assistant":
            last = self._append("assistant", "reply", "", number, record)
        else:
            last.line_numbers.append(number)
        last.tool_calls.append(call)

    def _tool_result(self, number: int, record: dict[str, Any], payload: dict[str, Any]) -> None:
        call_id = text_field(payload.get("call_id"))
        call = self.calls.get(call_id)
        body, is_error = _output(payload.get("output"))
        text = self.pack.strip_noise(body, "tool_result")
        result = ToolResult(
            call_id=call_id,
            tool=call.tool if call else "",
            summary=call.summary if call else "",
            text=text,
            is_error=is_error,
            shape="error" if is_error else ("bash" if call and call.tool == "Bash" else "text"),
            diff=text_field(call.input.get("patch")) if call else "",
        )
        message = self._append("tool", "tool_result", text, number, record, call_id)
        message.result = result


def _raw_input(payload: dict[str, Any]) -> dict[str, Any]:
    """A call's input as a dict: parsed JSON arguments, free-form input, or the call's action."""
    arguments = payload.get("arguments")
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except UNPARSABLE_LINE:
            parsed = {"input": arguments}
        return parsed if isinstance(parsed, dict) else {"input": parsed}
    if isinstance(arguments, dict):
        return arguments
    if isinstance(payload.get("input"), str):
        return {"input": payload["input"]}
    action = payload.get("action")
    return action if isinstance(action, dict) else {}


def canonical_input(tool: str, raw: dict[str, Any]) -> dict[str, Any]:
    """Codex field names mapped onto canonical tool fields: one summary rule serves both."""
    data = dict(raw)
    if tool == "Bash":
        command = data.get("command", data.get("cmd"))
        data["command"] = _shelltext_field(command)
    elif tool == "Edit":
        patch = text_field(data.get("input")) or text_field(data.get("patch"))
        files = _PATCH_FILE.findall(patch)
        data.update(patch=patch, file_path=", ".join(files))
    elif tool == "TodoWrite" and isinstance(data.get("plan"), list):
        data["todos"] = [
            {"content": item.get("step", "")} for item in data["plan"] if isinstance(item, dict)
        ]
    elif tool == "Read" and "path" in data:
        data["file_path"] = data["path"]
    return data


def _shelltext_field(command: Any) -> str:
    if isinstance(command, str):
        return command
    if not isinstance(command, list):
        return ""
    argv = [str(part) for part in command]
    if len(argv) == 3 and argv[1] in _SHELL_SCRIPT_FLAGS:
        return argv[2]
    return shlex.join(argv)


def _output(output: Any) -> tuple[str, bool]:
    """A call output's text and whether it failed (non-zero exit code)."""
    if isinstance(output, str):
        try:
            parsed = json.loads(output)
        except UNPARSABLE_LINE:
            parsed = None
        if isinstance(parsed, dict) and "output" in parsed:
            output = parsed
        else:
            match = _EXIT_CODE_LINE.match(output)
            return output, bool(match and match.group(1) != "0")
    if isinstance(output, dict):
        metadata = output.get("metadata") if isinstance(output.get("metadata"), dict) else {}
        code = metadata.get("exit_code")
        return block_text(output.get("output")), isinstance(code, int) and code != 0
    return block_text(output), False
