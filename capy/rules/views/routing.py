"""Typed view of the routing pack: what PreToolUse, SessionStart and PreCompact hooks say.

The view types the pack for readers such as `capy setup`, `capy doctor` and the docs. The
interpreter is `capy.hooks.routing`, which works on the pack's plain cached data because a
hook, a fresh process on every tool call, cannot afford to import pydantic.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from capy.rules.views.base import BaseModel, ConfigDict, PackView, RuleView, active, field_validator

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


class RoutingAction(StrEnum):
    DENY = "deny"
    REDIRECT = "redirect"
    GUIDE = "guide"
    APPEND_ROUTING = "append-routing"
    SECURITY_CHECK = "security-check"
    ISSUE_CLI = "issue-cli"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RoutingBlock(_Frozen):
    text: str
    max_bytes: int


class Guidance(RuleView):
    tool: str
    text: str


class PreToolAction(RuleView):
    tool: str
    action: RoutingAction
    field: str | None = None
    kind: Literal["regex", "command"] | None = None
    pattern: str | None = None
    examples: dict[str, tuple[str, ...]] | None = None
    message: str | None = None
    guidance_ref: str | None = None


class IssueUrl(RuleView):
    kind: Literal["regex"]
    pattern: str
    keywords: tuple[str, ...] = ()
    examples: dict[str, tuple[str, ...]]
    command: str
    message: str


class AllowCommand(RuleView):
    kind: Literal["regex", "command"]
    pattern: str
    keywords: tuple[str, ...] = ()
    examples: dict[str, tuple[str, ...]]


class Switches(_Frozen):
    session_start: bool
    guidance: bool
    redirect: bool
    deny: bool
    subagent_routing: bool
    issue_cli: bool
    precompact_snapshot: bool


class EscapeHatches(_Frozen):
    allow_commands: tuple[AllowCommand, ...]
    allow_domains: tuple[str, ...]
    switches: Switches
    session_start_max_bytes: int

    @field_validator("allow_commands", mode="after")
    @classmethod
    def _active_only(cls, rules: tuple[Any, ...]) -> tuple[Any, ...]:
        return active(rules)


class Priority(_Frozen):
    category: EventCategory
    max_items: int
    max_chars_each: int


class Precompact(_Frozen):
    budget_bytes: int
    header: str
    priorities: tuple[Priority, ...]


class EventCategoryRule(_Frozen):
    category: EventCategory
    tools: tuple[str, ...]
    fields: tuple[str, ...]
    pattern: str | None = None


class SessionEvents(_Frozen):
    keep_per_category: int
    max_chars: int
    categories: tuple[EventCategoryRule, ...]


class RoutingPack(PackView):
    routing_block: RoutingBlock
    guidance: tuple[Guidance, ...]
    pre_tool_actions: tuple[PreToolAction, ...]
    issue_urls: tuple[IssueUrl, ...]
    escape_hatches: EscapeHatches
    precompact: Precompact
    session_events: SessionEvents | None = None

    @field_validator("guidance", "pre_tool_actions", "issue_urls", mode="after")
    @classmethod
    def _active_only(cls, rules: tuple[Any, ...]) -> tuple[Any, ...]:
        return active(rules)


VIEW = RoutingPack
