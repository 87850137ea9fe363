"""The routing pack interpreted on its plain (cached) data: which PreToolUse rule decides a call.

Order, as the pack documents it: an escape hatch (allowed command or domain) lets the call
through untouched, except for security checks; otherwise the first pre-tool rule whose tool,
switch and pattern apply decides. Regexes are compiled on first use, so a call that touches one
rule compiles one pattern.
"""

from __future__ import annotations

from capy.packregex import glob_matches, pack_regex

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable
    from typing import Any

# A URL's host, after an optional user:password@; IPv6 hosts keep their brackets.
_URL_HOST = r"https?://(?:[^\s'\"<>)/@]{0,256}@)?(\[[0-9A-Fa-f:.]{1,64}\]|[^\s'\"<>)/:?#@]{1,253})"

# Which escape-hatch switch turns an action off; security checks have none on purpose.
SWITCH_FOR: dict[str, str | None] = {
    "deny": "deny",
    "redirect": "redirect",
    "guide": "guidance",
    "append-routing": "subagent_routing",
    "issue-cli": "issue_cli",
    "security-check": None,
}


# Command patterns (`git push:*`) arrive compiled to regex sources by the compact cache
# (`capy.hooks.compiled`), which reads them with `capy.rules.commands`; they are matched
# against the command with its whitespace collapsed, as that module specifies.
COMMAND_REGEX = "command-regex"


def normalise_command(command: str) -> str:
    return " ".join(command.split())


def compiled(kind: str, pattern: str) -> re.Pattern[str]:
    return pack_regex(pattern)


def text_matches(kind: str, pattern: str, text: str) -> bool:
    if kind == COMMAND_REGEX:
        return compiled(kind, pattern).search(normalise_command(text)) is not None
    return compiled(kind, pattern).search(text) is not None


class _Blank(dict[str, str]):
    """format_map source that leaves unknown placeholders empty instead of raising."""

    def __missing__(self, key: str) -> str:
        return ""


def render(template: str, **values: str) -> str:
    return template.format_map(_Blank(values))


class IssueLink:
    __slots__ = ("command", "message", "rule_id", "url")

    def __init__(self, rule_id: str, url: str, command: str, message: str):
        self.rule_id = rule_id
        self.url = url
        self.command = command
        self.message = message


class Selection:
    """The pre-tool rule that decides a call, and the issue link for issue-cli."""

    __slots__ = ("issue", "rule")

    def __init__(self, rule: dict[str, Any], issue: IssueLink | None = None):
        self.rule = rule
        self.issue = issue

    @property
    def action(self) -> str:
        return self.rule["action"]


class Router:
    def __init__(self, routing: dict[str, Any], settings: dict[str, Any]):
        self.pack = routing
        self.hatches = routing["escape_hatches"]
        self.switches = dict(self.hatches["switches"])
        if not settings.get("guidance", True):
            self.switches["guidance"] = False
        self._allow_patterns = list(settings.get("allow_commands", ()))
        self._allow_domains = [
            *self.hatches.get("allow_domains", ()),
            *settings.get("allow_domains", ()),
        ]

    def switched_on(self, name: str) -> bool:
        return bool(self.switches.get(name, True))

    def guidance_text(self, guidance_id: str, tool: str) -> str | None:
        for item in self.pack["guidance"]:
            if item["id"] == guidance_id:
                return render(item["text"], tool=tool)
        return None

    # --- escape hatches -----------------------------------------------------------------------

    def command_allowed(self, command: str) -> bool:
        lowered = command.lower()
        if any(
            text_matches(rule["kind"], rule["pattern"], command)
            for rule in self.hatches.get("allow_commands", ())
            if keywords_present(rule, lowered)
        ):
            return True
        return any(
            text_matches(COMMAND_REGEX, pattern, command) for pattern in self._allow_patterns
        )

    def host_allowed(self, host: str) -> bool:
        host = host.lower().strip("[]").rstrip(".")
        for domain in self._allow_domains:
            domain = domain.lower().strip("[]")
            if domain.startswith("*.") and host.endswith(domain[1:]):
                return True
            if host == domain:
                return True
        return False

    def escaped(self, tool: str, tool_input: dict[str, Any]) -> bool:
        command = tool_input.get("command")
        if tool == "Bash" and isinstance(command, str) and self.command_allowed(command):
            return True
        text = command if tool == "Bash" else tool_input.get("url")
        hosts = compiled("regex", _URL_HOST).findall(text) if isinstance(text, str) else []
        return bool(hosts) and all(self.host_allowed(host) for host in hosts)

    # --- selection ----------------------------------------------------------------------------

    def select(
        self,
        tool: str,
        tool_input: dict[str, Any],
        shown: Callable[[str], bool] = lambda _guidance_id: False,
    ) -> Selection | None:
        """The rule that decides a PreToolUse call (canonical tool and input), or None.

        A guide rule whose guidance this session has already `shown` does not apply. The escape
        hatches are checked only once some rule would decide: their regexes are the costliest,
        and most calls match no rule at all.
        """
        gated = False  # a rule an escape hatch would have stopped came before the decider
        for rule in self.pack["pre_tool_actions"]:
            action = rule["action"]
            if not _tool_matches(rule["tool"], tool):
                continue
            switch = SWITCH_FOR.get(action)
            if switch is not None and not self.switched_on(switch):
                continue
            gated = gated or action != "security-check"
            if action == "guide" and shown(rule.get("guidance_ref", "")):
                continue
            selection = self._applies(rule, tool_input)
            if selection is None:
                continue
            return None if gated and self.escaped(tool, tool_input) else selection
        return None

    def _applies(self, rule: dict[str, Any], tool_input: dict[str, Any]) -> Selection | None:
        if not _condition_holds(rule, tool_input):
            return None
        if rule["action"] != "issue-cli":
            return Selection(rule)
        value = tool_input.get(rule.get("field") or "")
        link = self.find_issue_link(value) if isinstance(value, str) else None
        return Selection(rule, link) if link is not None else None

    def find_issue_link(self, text: str) -> IssueLink | None:
        lowered = text.lower()
        for rule in self.pack["issue_urls"]:
            if not keywords_present(rule, lowered):
                continue
            match = compiled("regex", rule["pattern"]).search(text)
            if match is None:
                continue
            groups = {name: value for name, value in match.groupdict().items() if value}
            command = render(rule["command"], **groups)
            message = render(rule["message"], **groups, command=command, url=match[0])
            return IssueLink(rule["id"], match[0], command, message)
        return None


def keywords_present(rule: dict[str, Any], lowered: str) -> bool:
    """True when the rule has no keywords or one occurs in the (lower-cased) text."""
    keywords = rule.get("keywords")
    return not keywords or any(keyword in lowered for keyword in keywords)


def _tool_matches(pattern: str, tool: str) -> bool:
    return glob_matches(tool, pattern) if "*" in pattern else tool == pattern


def _condition_holds(rule: dict[str, Any], tool_input: dict[str, Any]) -> bool:
    """True without a pattern; otherwise the pattern must match the input field."""
    pattern = rule.get("pattern")
    if not pattern:
        return True
    value = tool_input.get(rule.get("field") or "")
    return isinstance(value, str) and text_matches(rule.get("kind") or "regex", pattern, value)
