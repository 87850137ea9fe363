"""Typed view of the routing pack: what PreToolUse, SessionStart and PreCompact hooks say.

`RoutingPack.select` applies the pack's own order (escape hatches, then the first applying
pre-tool rule) so every hook handler makes the same choice for the same call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from fnmatch import fnmatchcase
from functools import cached_property
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, field_validator

from capy.rules.commands import command_pattern_regex, normalise_command
from capy.rules.views.base import PackView, RuleView, active

EventCategory = Literal[
    "todo",
    "error",
    "file-edit",
    "user-prompt",
    "decision",
    "git",
    "subagent",
    "command",
    "fetch",
    "search",
    "environment",
]

_URL = re.compile(r"https?://[^\s'\"<>)]{1,2048}")


class RoutingAction(StrEnum):
    DENY = "deny"
    REDIRECT = "redirect"
    GUIDE = "guide"
    APPEND_ROUTING = "append-routing"
    SECURITY_CHECK = "security-check"
    ISSUE_CLI = "issue-cli"


# Which escape-hatch switch turns an action off; security checks have none on purpose.
_SWITCH_FOR: dict[RoutingAction, str | None] = {
    RoutingAction.DENY: "deny",
    RoutingAction.REDIRECT: "redirect",
    RoutingAction.GUIDE: "guidance",
    RoutingAction.APPEND_ROUTING: "subagent_routing",
    RoutingAction.ISSUE_CLI: "issue_cli",
    RoutingAction.SECURITY_CHECK: None,
}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _compile(kind: str, pattern: str) -> re.Pattern[str]:
    return command_pattern_regex(pattern) if kind == "command" else re.compile(pattern)


def _text_matches(kind: str, compiled: re.Pattern[str], text: str) -> bool:
    if kind == "command":
        return compiled.match(normalise_command(text)) is not None
    return compiled.search(text) is not None


class RoutingBlock(_Frozen):
    text: str
    max_bytes: int


class Guidance(RuleView):
    tool: str
    text: str

    def render(self, tool: str) -> str:
        return self.text.format(tool=tool)


class PreToolAction(RuleView):
    tool: str
    action: RoutingAction
    field: str | None = None
    kind: Literal["regex", "command"] | None = None
    pattern: str | None = None
    examples: dict[str, tuple[str, ...]] | None = None
    message: str | None = None
    guidance_ref: str | None = None

    @cached_property
    def compiled(self) -> re.Pattern[str] | None:
        return _compile(self.kind or "regex", self.pattern) if self.pattern else None

    def matches_tool(self, tool: str) -> bool:
        return fnmatchcase(tool, self.tool) if "*" in self.tool else tool == self.tool

    def condition_holds(self, tool_input: dict[str, Any]) -> bool:
        """True without a pattern; otherwise the pattern must match the input field."""
        if self.compiled is None:
            return True
        value = tool_input.get(self.field or "")
        return isinstance(value, str) and _text_matches(self.kind or "regex", self.compiled, value)

    def render_message(self, **values: str) -> str:
        return (self.message or "").format_map(_Blank(values))


@dataclass(frozen=True)
class IssueLink:
    rule_id: str
    url: str
    command: str
    message: str


class IssueUrl(RuleView):
    kind: Literal["regex"]
    pattern: str
    examples: dict[str, tuple[str, ...]]
    command: str
    message: str

    @cached_property
    def compiled(self) -> re.Pattern[str]:
        return re.compile(self.pattern)

    def find(self, text: str) -> IssueLink | None:
        match = self.compiled.search(text)
        if match is None:
            return None
        groups = {name: value for name, value in match.groupdict().items() if value is not None}
        command = self.command.format_map(_Blank(groups))
        message = self.message.format_map(_Blank({**groups, "command": command, "url": match[0]}))
        return IssueLink(self.id, match[0], command, message)


class AllowCommand(RuleView):
    kind: Literal["regex", "command"]
    pattern: str
    examples: dict[str, tuple[str, ...]]

    @cached_property
    def compiled(self) -> re.Pattern[str]:
        return _compile(self.kind, self.pattern)

    def matches(self, command: str) -> bool:
        return _text_matches(self.kind, self.compiled, command)


class Switches(_Frozen):
    session_start: bool
    guidance: bool
    redirect: bool
    deny: bool
    subagent_routing: bool
    issue_cli: bool
    precompact_snapshot: bool

    def allows(self, action: RoutingAction) -> bool:
        name = _SWITCH_FOR[action]
        return True if name is None else bool(getattr(self, name))


class EscapeHatches(_Frozen):
    allow_commands: tuple[AllowCommand, ...]
    allow_domains: tuple[str, ...]
    switches: Switches
    session_start_max_bytes: int

    @field_validator("allow_commands", mode="after")
    @classmethod
    def _active_only(cls, rules: tuple[Any, ...]) -> tuple[Any, ...]:
        return active(rules)

    def command_allowed(self, command: str) -> bool:
        return any(rule.matches(command) for rule in self.allow_commands)

    def host_allowed(self, host: str) -> bool:
        host = host.lower().strip("[]").rstrip(".")
        for domain in self.allow_domains:
            domain = domain.strip("[]")
            if domain.startswith("*.") and host.endswith(domain[1:]):
                return True
            if host == domain:
                return True
        return False

    def url_allowed(self, url: str) -> bool:
        host = urlsplit(url).hostname
        return host is not None and self.host_allowed(host)


class Priority(_Frozen):
    category: EventCategory
    max_items: int
    max_chars_each: int


class Precompact(_Frozen):
    budget_bytes: int
    header: str
    priorities: tuple[Priority, ...]

    def render_header(self, session_id: str, event_count: int) -> str:
        return self.header.format_map(
            _Blank({"session_id": session_id, "event_count": str(event_count)})
        )


class _Blank(dict[str, str]):
    """format_map source that leaves unknown placeholders empty instead of raising."""

    def __missing__(self, key: str) -> str:
        return ""


@dataclass(frozen=True)
class Selection:
    """The pre-tool rule that decided a call, and the issue link for issue-cli."""

    rule: PreToolAction
    issue: IssueLink | None = None


class RoutingPack(PackView):
    routing_block: RoutingBlock
    guidance: tuple[Guidance, ...]
    pre_tool_actions: tuple[PreToolAction, ...]
    issue_urls: tuple[IssueUrl, ...]
    escape_hatches: EscapeHatches
    precompact: Precompact

    @field_validator("guidance", "pre_tool_actions", "issue_urls", mode="after")
    @classmethod
    def _active_only(cls, rules: tuple[Any, ...]) -> tuple[Any, ...]:
        return active(rules)

    @cached_property
    def _guidance_by_id(self) -> dict[str, Guidance]:
        return {item.id: item for item in self.guidance}

    def guidance_text(self, guidance_id: str, tool: str) -> str | None:
        """Guidance text by id; None when the guidance rule was disabled."""
        item = self._guidance_by_id.get(guidance_id)
        return item.render(tool) if item else None

    def find_issue_link(self, text: str) -> IssueLink | None:
        for rule in self.issue_urls:
            link = rule.find(text)
            if link is not None:
                return link
        return None

    def escaped(self, tool: str, tool_input: dict[str, Any]) -> bool:
        """True when an escape hatch lets the call through untouched."""
        command = tool_input.get("command")
        hatches = self.escape_hatches
        if tool == "Bash" and isinstance(command, str) and hatches.command_allowed(command):
            return True
        text = tool_input.get("url") if tool != "Bash" else command
        urls = _URL.findall(text) if isinstance(text, str) else []
        return bool(urls) and all(hatches.url_allowed(url) for url in urls)

    def select(self, tool: str, tool_input: dict[str, Any]) -> Selection | None:
        """The rule that decides a PreToolUse call (canonical tool name and input), or None."""
        escaped = self.escaped(tool, tool_input)
        for rule in self.pre_tool_actions:
            if not rule.matches_tool(tool) or not self.escape_hatches.switches.allows(rule.action):
                continue
            if escaped and rule.action is not RoutingAction.SECURITY_CHECK:
                return None
            if not rule.condition_holds(tool_input):
                continue
            if rule.action is RoutingAction.ISSUE_CLI:
                value = tool_input.get(rule.field or "")
                link = self.find_issue_link(value) if isinstance(value, str) else None
                if link is None:
                    continue
                return Selection(rule, link)
            return Selection(rule)
        return None


VIEW = RoutingPack
