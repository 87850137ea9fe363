"""Typed view of the platforms pack: how each agent platform names events and tools, and where
hook input fields and output decisions live in its JSON.

The hook adapter reads and writes payloads only through `InputPaths.read` and
`capy.jsonpath.write_path`, so a
platform that moves a field is fixed in rules/platforms.yaml alone.
"""

from __future__ import annotations

import re
from enum import StrEnum
from functools import cached_property
from typing import Any, Literal

from capy.jsonpath import read_path
from capy.rules.views.base import (
    BaseModel,
    ConfigDict,
    Field,
    PackView,
    RuleView,
    active,
    field_validator,
)


class CanonicalEvent(StrEnum):
    PRE_TOOL_USE = "PreToolUse"
    POST_TOOL_USE = "PostToolUse"
    POST_TOOL_USE_FAILURE = "PostToolUseFailure"
    USER_PROMPT_SUBMIT = "UserPromptSubmit"
    SESSION_START = "SessionStart"
    SESSION_END = "SessionEnd"
    PRE_COMPACT = "PreCompact"
    STOP = "Stop"
    SUBAGENT_STOP = "SubagentStop"


class Decision(StrEnum):
    ALLOW = "allow"
    DENY = "deny"
    ASK = "ask"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class InputPaths(_Frozen):
    event_name: tuple[str, ...]
    session_id: tuple[str, ...] = ()
    cwd: tuple[str, ...] = ()
    transcript_path: tuple[str, ...] = ()
    tool_name: tuple[str, ...] = ()
    tool_input: tuple[str, ...] = ()
    tool_response: tuple[str, ...] = ()
    tool_use_id: tuple[str, ...] = ()
    prompt: tuple[str, ...] = ()
    source: tuple[str, ...] = ()
    error: tuple[str, ...] = ()

    def read(self, payload: Any, field: str) -> Any:
        """The first candidate path present in the payload, or None."""
        for path in getattr(self, field):
            value = read_path(payload, path)
            if value is not None:
                return value
        return None


class DecisionOutput(_Frozen):
    style: Literal["json", "exit-code"]
    path: str | None = None
    values: dict[Decision, str] = Field(default_factory=dict)
    reason_path: str | None = None
    user_message_path: str | None = None

    def supports(self, decision: Decision) -> bool:
        return (self.style == "exit-code" and decision is Decision.DENY) or decision in self.values


class ContextOutput(_Frozen):
    style: Literal["json", "stdout"]
    path: str | None = None
    events: tuple[CanonicalEvent, ...]


class HookOutput(_Frozen):
    event_name_path: str | None = None
    decision: DecisionOutput
    updated_input_path: str | None = None
    context: ContextOutput | None = None
    block_exit_code: int

    @property
    def can_rewrite_input(self) -> bool:
        return self.updated_input_path is not None

    def accepts_context(self, event: CanonicalEvent) -> bool:
        return self.context is not None and event in self.context.events


PROJECT_STEP = "{project}"  # a key step that stands for the project's absolute path


class ConfigFile(_Frozen):
    path: str
    scope: Literal["project", "local", "user"]
    format: Literal["json", "jsonc", "toml", "js"]
    key: str | None = None
    note: str | None = None
    # How capy's entries are written (read by capy/setup; absent: the layout is unknown).
    shape: Literal["servers", "matcher-groups", "handlers", "plugin-module"] | None = None
    command_style: Literal["string", "split", "list"] | None = None
    entry: dict[str, str | bool | int] = Field(default_factory=dict)
    scaffold: dict[str, Any] = Field(default_factory=dict)

    def key_steps(self, project_dir: Any) -> list[str]:
        """The steps of `key`, with a `{project}` step made the project's absolute path (kept
        whole, dots and all)."""
        steps = (self.key or "").split(".") if self.key else []
        return [str(project_dir) if step == PROJECT_STEP else step for step in steps]


class PermissionFile(_Frozen):
    path: str
    scope: Literal["local", "project", "user"]


class PermissionFiles(_Frozen):
    """Where a platform reads permission rules (Claude Code's settings), highest first."""

    managed_dirs: dict[str, str]
    managed_file: str
    managed_drop_ins: str | None = None
    files: tuple[PermissionFile, ...]


class McpHookMatcher(_Frozen):
    matcher: str
    input: dict[str, str]


class McpHooks(_Frozen):
    """Hooks the platform can run as a call to capy's MCP tool instead of a process."""

    tool: str
    events: tuple[CanonicalEvent, ...]
    entry: dict[str, str | bool | int] = Field(default_factory=dict)
    input: dict[str, str]
    matchers: tuple[McpHookMatcher, ...]
    server_args: tuple[str, ...] = ()
    note: str | None = None


class ConfigLocations(_Frozen):
    mcp: tuple[ConfigFile, ...]
    hooks: tuple[ConfigFile, ...]
    permissions: PermissionFiles | None = None
    mcp_hooks: McpHooks | None = None


class TranscriptLocation(_Frozen):
    glob: str
    format: Literal["claude-code-jsonl", "codex-rollout-jsonl"]


class Platform(RuleView):
    key: str
    name: str
    docs: tuple[str, ...]
    transport: Literal["command", "plugin"]
    events: dict[CanonicalEvent, str]
    tools: dict[str, str]
    input_fields: dict[str, str] = Field(default_factory=dict)
    mcp_tool_name: str | None = None
    input: InputPaths
    output: HookOutput
    config: ConfigLocations
    resume_command: str | None = None
    transcripts: TranscriptLocation | None = None

    @cached_property
    def _events_by_native(self) -> dict[str, CanonicalEvent]:
        return {native: canonical for canonical, native in self.events.items()}

    @cached_property
    def _mcp_pattern(self) -> re.Pattern[str] | None:
        return re.compile(self.mcp_tool_name) if self.mcp_tool_name else None

    def native_event(self, event: CanonicalEvent) -> str | None:
        return self.events.get(event)

    def canonical_event(self, native: str) -> CanonicalEvent | None:
        return self._events_by_native.get(native)

    def canonical_tool(self, native: str) -> str:
        """Canonical name of a native tool; unknown names (MCP tools among them) pass through."""
        return self.tools.get(native, native)

    def canonical_input(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        """Tool input with native field names renamed to the canonical ones."""
        return {self.input_fields.get(name, name): value for name, value in tool_input.items()}

    def native_input(self, tool_input: dict[str, Any]) -> dict[str, Any]:
        """The reverse of canonical_input, for writing a rewritten call back."""
        reverse = {canonical: native for native, canonical in self.input_fields.items()}
        return {reverse.get(name, name): value for name, value in tool_input.items()}

    def mcp_tool(self, native: str) -> tuple[str, str] | None:
        """(server, tool) when the native tool name is an MCP tool, else None."""
        pattern = self._mcp_pattern
        match = pattern.match(native) if pattern else None
        return (match["server"], match["tool"]) if match else None

    def resume(self, session_id: str) -> str | None:
        if self.resume_command is None:
            return None
        return self.resume_command.format(session_id=session_id)


class McpServer(_Frozen):
    name: str
    command: tuple[str, ...]


class PlatformsPack(PackView):
    hook_command: str
    mcp_server: McpServer | None = None
    local_fallback_scope: Literal["project", "user"] = "user"
    probe_environment: dict[str, str] = Field(default_factory=dict)
    platforms: tuple[Platform, ...]

    @field_validator("platforms", mode="after")
    @classmethod
    def _active_only(cls, rules: tuple[Any, ...]) -> tuple[Any, ...]:
        return active(rules)

    @cached_property
    def _by_key(self) -> dict[str, Platform]:
        return {platform.key: platform for platform in self.platforms}

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(self._by_key)

    def platform(self, key: str) -> Platform:
        try:
            return self._by_key[key]
        except KeyError:
            known = ", ".join(self._by_key)
            raise KeyError(f"unknown platform {key!r}; known platforms: {known}") from None

    def hook_command_for(
        self, key: str, event: CanonicalEvent, *, capy: str = "capy"
    ) -> str | None:
        """The command an installer registers for one event, or None if the platform lacks it;
        `capy` is the program that starts capy, already quoted for a shell."""
        native = self.platform(key).native_event(event)
        if native is None:
            return None
        return self.hook_command.format(capy=capy, platform=key, event=native)


VIEW = PlatformsPack
