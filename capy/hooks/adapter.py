"""One adapter for every platform, driven by its entry in the platforms pack.

Reading: native event, tool and field names become the canonical (Claude Code) ones. Writing: a
`Verdict` becomes the platform's JSON (or exit code and stdout), at the paths the pack names.
"""

from __future__ import annotations

import zlib

from capy.hooks.outcome import ALLOW, DENY, PASS_THROUGH, HookOutcome, Verdict
from capy.jsonpath import read_first, write_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class HookInput:
    """The fields capy reads from a payload, under canonical names."""

    __slots__ = (
        "cwd",
        "error",
        "event",
        "native_tool",
        "prompt",
        "session_id",
        "source",
        "tool",
        "tool_input",
        "tool_response",
        "tool_use_id",
        "transcript_path",
    )

    def __init__(
        self,
        event: str,
        session_id: str,
        *,
        cwd: str | None = None,
        tool: str | None = None,
        native_tool: str | None = None,
        tool_input: dict[str, Any] | None = None,
        tool_response: Any = None,
        prompt: str | None = None,
        source: str | None = None,
        error: str | None = None,
        transcript_path: str | None = None,
        tool_use_id: str | None = None,
    ):
        self.event = event
        self.session_id = session_id
        self.cwd = cwd
        self.tool = tool
        self.native_tool = native_tool
        self.tool_input = tool_input if tool_input is not None else {}
        self.tool_response = tool_response
        self.prompt = prompt
        self.source = source
        self.error = error
        self.transcript_path = transcript_path
        self.tool_use_id = tool_use_id


class Adapter:
    def __init__(self, platform: dict[str, Any]):
        self.platform = platform
        self.key: str = platform["key"]
        self._events: dict[str, str] = platform["events"]
        self._tools: dict[str, str] = platform.get("tools", {})
        self._fields: dict[str, str] = platform.get("input_fields", {})
        self._input: dict[str, list[str]] = platform["input"]
        self._output: dict[str, Any] = platform["output"]

    # --- reading ------------------------------------------------------------------------------

    def canonical_event(self, name: str) -> str | None:
        """The canonical event for a native name (what installers register), or a canonical one."""
        for canonical, native in self._events.items():
            if name == native:
                return canonical
        return name if name in self._events else None

    def native_event(self, canonical: str) -> str:
        return self._events.get(canonical, canonical)

    def read(self, payload: dict[str, Any], name: str) -> Any:
        return read_first(payload, self._input.get(name, ()))

    def parse(self, event: str, payload: dict[str, Any]) -> HookInput:
        native_tool = _text(self.read(payload, "tool_name"))
        tool_input = self.read(payload, "tool_input")
        cwd = _text(self.read(payload, "cwd"))
        return HookInput(
            event=event,
            session_id=_text(self.read(payload, "session_id")) or _derived_session(cwd),
            cwd=cwd,
            tool=self.canonical_tool(native_tool) if native_tool else None,
            native_tool=native_tool,
            tool_input=self.canonical_input(tool_input) if isinstance(tool_input, dict) else {},
            tool_response=self.read(payload, "tool_response"),
            prompt=_text(self.read(payload, "prompt")),
            source=_text(self.read(payload, "source")),
            error=_text(self.read(payload, "error")),
            transcript_path=_text(self.read(payload, "transcript_path")),
            tool_use_id=_text(self.read(payload, "tool_use_id")),
        )

    def canonical_tool(self, native: str) -> str:
        """Canonical name; MCP tools become mcp__<server>__<tool> whatever the native spelling."""
        if native in self._tools:
            return self._tools[native]
        pattern = self.platform.get("mcp_tool_name")
        if pattern:
            from capy.packregex import pack_regex

            match = pack_regex(pattern).match(native)
        else:
            match = None
        return f"mcp__{match['server']}__{match['tool']}" if match else native

    def canonical_input(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        return {self._fields.get(name, name): value for name, value in tool_input.items()}

    def native_input(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        reverse = {canonical: native for native, canonical in self._fields.items()}
        return {reverse.get(name, name): value for name, value in tool_input.items()}

    # --- what the platform can take -----------------------------------------------------------

    @property
    def can_rewrite_input(self) -> bool:
        return bool(self._output.get("updated_input_path"))

    def accepts_context(self, event: str) -> bool:
        context = self._output.get("context")
        return bool(context) and event in context.get("events", ())

    def supports(self, decision: str) -> bool:
        output = self._output["decision"]
        if output["style"] == "exit-code":
            return decision == DENY
        return decision in output.get("values", {})

    # --- writing ------------------------------------------------------------------------------

    def render(self, event: str, verdict: Verdict) -> HookOutcome:
        decision = self._decision_for(verdict.decision)
        context = verdict.context if verdict.context and self.accepts_context(event) else None
        updated = verdict.updated_input if self.can_rewrite_input else None
        if decision is None and context is None and updated is None:
            return PASS_THROUGH
        output = self._output
        if decision == DENY and output["decision"]["style"] == "exit-code":
            reason = verdict.reason or "capy refused this call"
            return HookOutcome(stderr=reason + "\n", exit_code=output["block_exit_code"])
        if context is not None and output["context"]["style"] == "stdout":
            # Plain-text platforms (Kiro) take context on stdout and nothing else.
            return HookOutcome(stdout=context.rstrip("\n") + "\n")
        body: dict[str, Any] = {}
        if output.get("event_name_path"):
            write_path(body, output["event_name_path"], self.native_event(event))
        if decision is not None and output["decision"]["style"] == "json":
            self._write_decision(body, decision, verdict.reason)
        if updated is not None:
            write_path(body, output["updated_input_path"], self.native_input(updated))
        if context is not None:
            write_path(body, output["context"]["path"], context)
        from capy.leanjson import dumps

        return HookOutcome(stdout=dumps(body, ensure_ascii=False) + "\n")

    def _decision_for(self, decision: str | None) -> str | None:
        if decision is None or self.supports(decision):
            return decision
        if decision == ALLOW:
            return None  # the call goes on anyway
        # A platform without "ask" gets a deny: the rule wanted a person to decide, and
        # letting the call through silently would be the unsafe reading.
        return DENY if self.supports(DENY) else None

    def _write_decision(self, body: dict[str, Any], decision: str, reason: str | None) -> None:
        output = self._output["decision"]
        write_path(body, output["path"], output["values"][decision])
        if reason and output.get("reason_path"):
            write_path(body, output["reason_path"], reason)
        if reason and output.get("user_message_path") and decision != ALLOW:
            write_path(body, output["user_message_path"], reason)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _derived_session(cwd: str | None) -> str:
    """Platforms without a session id (Kiro) get one per working directory."""
    return f"cwd-{zlib.crc32((cwd or '').encode()):08x}"
