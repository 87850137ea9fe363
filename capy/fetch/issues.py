"""Issue and pull-request URLs: answered with the gh/glab command the routing pack names.

An issue page fetched as HTML is mostly navigation; the CLI gives the thread as text. The
patterns, commands and wording are the routing pack's `issue_urls`, the same rules the hooks
apply to WebFetch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capy.rules.views.routing import RoutingPack


@dataclass(frozen=True)
class IssueRoute:
    rule_id: str
    command: str
    message: str  # the pack's advice, without its "capy: " speaker prefix


class _Blank(dict[str, str]):
    """Unknown placeholders in a pack template render empty instead of raising."""

    def __missing__(self, key: str) -> str:
        return ""


def issue_route(url: str, routing: RoutingPack) -> IssueRoute | None:
    """The route for `url` when the URL itself (not something in its query) is an issue page."""
    import re

    for rule in routing.issue_urls:
        match = re.compile(rule.pattern).match(url)
        if match is None:
            continue
        groups = {name: value for name, value in match.groupdict().items() if value is not None}
        command = rule.command.format_map(_Blank(groups))
        message = rule.message.format_map(_Blank({**groups, "command": command, "url": url}))
        return IssueRoute(rule.id, command, message.removeprefix("capy: "))
    return None
