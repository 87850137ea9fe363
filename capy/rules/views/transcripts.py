"""Typed view of the transcripts pack: what each tool call contributes to the index, how it is
summarised in one line, and which harness noise is stripped from transcript text."""

from __future__ import annotations

import re
from enum import StrEnum
from fnmatch import fnmatchcase
from functools import cached_property
from typing import Any, Literal
from urllib.parse import urlsplit

from capy.rules.views.base import (
    BaseModel,
    ConfigDict,
    Field,
    PackView,
    RuleView,
    active,
    field_validator,
)

Role = Literal["user", "assistant", "tool_result"]
LineHandling = Literal["read", "meta", "title", "skip"]
Render = Literal["text", "first_line", "basename", "host", "count", "line_count", "join"]


class Action(StrEnum):
    PROMOTE = "promote"
    ENRICH = "enrich"
    SKIP = "skip"


class ResultMode(StrEnum):
    """What of a tool's result body reaches the index."""

    EXCLUDED = "excluded"
    DIFF = "diff"
    BODY = "body"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _tool_matches(pattern: str, tool: str) -> bool:
    return fnmatchcase(tool, pattern) if "*" in pattern else tool == pattern


def _shorten(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[: limit - 1].rstrip() + "…"


class ToolAction(RuleView):
    tool: str
    action: Action
    on_error: Action | None = None

    def matches(self, tool: str) -> bool:
        return _tool_matches(self.tool, tool)


class FieldFormat(_Frozen):
    render: Render = "text"
    item_key: str | None = None
    max_chars: int | None = None
    prefix: str = ""
    suffix: str = ""

    def apply(self, value: Any) -> str:
        text = _shorten(self._render(value), self.max_chars)
        return f"{self.prefix}{text}{self.suffix}" if text else ""

    def _render(self, value: Any) -> str:
        if value is None or value == "" or value == []:
            return ""
        if self.render == "count":
            return str(len(value)) if isinstance(value, list | tuple | dict) else ""
        if self.render == "join":
            items = value if isinstance(value, list | tuple) else [value]
            picked = (
                item.get(self.item_key, "") if isinstance(item, dict) and self.item_key else item
                for item in items
            )
            return "; ".join(str(item) for item in picked if item not in (None, ""))
        text = value if isinstance(value, str) else str(value)
        if self.render == "first_line":
            return text.strip().split("\n", 1)[0]
        if self.render == "basename":
            return text.rstrip("/").rsplit("/", 1)[-1]
        if self.render == "host":
            return urlsplit(text).hostname or text
        if self.render == "line_count":
            return str(text.count("\n") + (0 if text.endswith("\n") else 1))
        return " ".join(text.split())


class SummaryFormat(_Frozen):
    template: str
    fields: dict[str, FieldFormat] = Field(default_factory=dict)
    max_chars: int

    def render(self, tool: str, tool_input: dict[str, Any]) -> str:
        """One line for a tool call; unknown placeholders and missing fields render empty."""
        plain = FieldFormat()
        values = _Blank({"tool": tool})
        for name, value in tool_input.items():
            values[name] = self.fields.get(name, plain).apply(value)
        line = self.template.format_map(values)
        return _shorten(" ".join(line.split()) if "\n" in line else line.strip(), self.max_chars)


class _Blank(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return ""


class SummaryRule(RuleView, SummaryFormat):
    tool: str

    def matches(self, tool: str) -> bool:
        return _tool_matches(self.tool, tool)


class NoiseRule(RuleView):
    kind: Literal["regex"]
    pattern: str
    action: Literal["strip", "unwrap"]
    applies_to: frozenset[Role]

    @cached_property
    def compiled(self) -> re.Pattern[str]:
        return re.compile(self.pattern)

    def clean(self, text: str) -> str:
        if self.action == "unwrap":
            return self.compiled.sub(lambda match: match["body"] or "", text)
        return self.compiled.sub("", text)


class ClaudeLines(_Frozen):
    line_types: dict[str, LineHandling]
    unknown_line_types: LineHandling
    skip_when_true: tuple[str, ...]
    sidechains: Literal["include", "skip"]
    skip_sidecars: tuple[str, ...] = ()

    def indexes_sidecar(self, file_name: str) -> bool:
        """Whether a subagent sidecar file (subagents/agent-*.jsonl) is indexed."""
        if self.sidechains == "skip":
            return False
        return not any(fnmatchcase(file_name, pattern) for pattern in self.skip_sidecars)

    def handling(self, line: dict[str, Any]) -> LineHandling:
        if any(line.get(flag) is True for flag in self.skip_when_true):
            return "skip"
        return self.line_types.get(str(line.get("type")), self.unknown_line_types)


class CodexLines(_Frozen):
    line_types: dict[str, LineHandling]
    unknown_line_types: LineHandling
    payload_types: dict[str, Literal["message", "tool_call", "tool_result", "skip"]]
    tool_aliases: dict[str, str]

    def handling(self, line: dict[str, Any]) -> LineHandling:
        return self.line_types.get(str(line.get("type")), self.unknown_line_types)

    def canonical_tool(self, name: str) -> str:
        return self.tool_aliases.get(name, name)


class Sweep(_Frozen):
    min_user_turns: int
    min_content_chars: int
    settle_seconds: int
    max_file_bytes: int

    def worth_indexing(self, user_turns: int, content_chars: int) -> bool:
        return user_turns >= self.min_user_turns and content_chars >= self.min_content_chars


class Chunking(_Frozen):
    max_chunk_bytes: int
    max_turns_per_chunk: int
    result_max_chars: int
    error_result_max_chars: int
    diff_max_lines: int
    title_chars: int = 80


class TranscriptsPack(PackView):
    default_action: Action
    tool_actions: tuple[ToolAction, ...]
    excluded_result_tools: frozenset[str]
    diff_result_tools: frozenset[str]
    default_summary: SummaryFormat
    summaries: tuple[SummaryRule, ...]
    noise: tuple[NoiseRule, ...]
    claude: ClaudeLines
    codex: CodexLines
    sweep: Sweep
    chunking: Chunking

    @field_validator("tool_actions", "summaries", "noise", mode="after")
    @classmethod
    def _active_only(cls, rules: tuple[Any, ...]) -> tuple[Any, ...]:
        return active(rules)

    def action_for(self, tool: str, *, is_error: bool = False) -> Action:
        """The first matching registry rule decides; on_error overrides for failed calls."""
        for rule in self.tool_actions:
            if rule.matches(tool):
                return rule.on_error if is_error and rule.on_error else rule.action
        return self.default_action

    def result_mode(self, tool: str) -> ResultMode:
        if any(_tool_matches(pattern, tool) for pattern in self.excluded_result_tools):
            return ResultMode.EXCLUDED
        if any(_tool_matches(pattern, tool) for pattern in self.diff_result_tools):
            return ResultMode.DIFF
        return ResultMode.BODY

    def summarize(self, tool: str, tool_input: dict[str, Any]) -> str:
        rule = next((rule for rule in self.summaries if rule.matches(tool)), None)
        return (rule or self.default_summary).render(tool, tool_input)

    def strip_noise(self, text: str, role: Role) -> str:
        for rule in self.noise:
            if role in rule.applies_to:
                text = rule.clean(text)
        return text.strip()


VIEW = TranscriptsPack
