"""Every reply on its way out: secrets redacted and terminal controls made visible.

The MCP server (`capy.server.calls.run_tool`) passes each reply through `outbound_reply` (the
CLI twins print theirs through `capy.cli.output`, which does the same), so no tool can return
a secret it read, ran into or was given, whatever path produced its text. The one exception is
capy_hook's answer to the host (`ToolReply.for_host`): hook protocol, not text for the agent.

Terminal controls are shown as escapes in the text the agent reads, because agents' clients
display tool results in terminals; structured content is redacted but left otherwise as is: it
is JSON-escaped in transit, data a client parses rather than text it shows.

Text read back from the index was redacted when stored; redacting it again here costs about
2 ms for a 40 KB reply, and changes nothing (masks are on the secrets pack's allowlist).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from capy.api.reply import ToolReply

if TYPE_CHECKING:
    from capy.api.workspace import Workspace


def outbound_reply(workspace: Workspace, reply: ToolReply) -> ToolReply:
    """`reply` as the agent may see it. With redaction turned off by the user, the text says so
    first, so neither the agent nor the user can take a raw secret for a redacted one."""
    from capy.security.controls import neutralise_controls
    from capy.security.redaction import (
        not_redacted_note,
        redact,
        redact_value,
        secrets_for_output,
    )

    if reply.for_host:
        return reply
    if workspace.redacts_replies:
        secrets = secrets_for_output(lambda: workspace.rules.view("secrets"))
        text = redact(reply.text, secrets=secrets).text
        data = None if reply.data is None else redact_value(reply.data, secrets=secrets)
    else:
        text, data = f"_{not_redacted_note()}_\n\n{reply.text}", reply.data
    return replace(reply, text=neutralise_controls(text), data=data)


def text_redactor(workspace: Workspace) -> Callable[[str], str] | None:
    """What `outbound_reply` does to secrets in text, for code that must redact before it cuts
    (the executor, whose middle cut could split a PEM key from its BEGIN line); None when the
    user turned reply redaction off, so nothing is paid for it."""
    from capy.security.redaction import redact, secrets_for_output

    if not workspace.redacts_replies:
        return None
    secrets = secrets_for_output(lambda: workspace.rules.view("secrets"))
    return lambda text: redact(text, secrets=secrets).text
