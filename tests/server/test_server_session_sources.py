"""A session's own ephemeral output is searched by default in that session, and only there.

Driven through real `capy serve` processes with the official SDK client, on a real captured
output of the niah-real set: the plain follow-up `capy_search(queries=[intent])` an agent makes
after `capy_execute` with an intent must find the output just indexed, while a second server
(another session on the same project) keeps ephemeral sources out unless asked for them.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from server_helpers import capy_session, text_of

pytestmark = pytest.mark.anyio

OUTPUT = Path(__file__).parents[2] / "fixtures" / "niah-real" / "outputs" / "pytest-cov-click.txt"
INTENT = "what coverage does core.py have"
NEEDLE = "src/click/core.py                1355     74    582     40    93%"
LEFT_OUT = "ephemeral source was not searched"


async def test_the_follow_up_search_finds_the_output_this_session_indexed(project_dir, server_home):
    code = f"cat {shlex.quote(str(OUTPUT))}"
    async with capy_session(project_dir, server_home) as client:
        executed = await client.call_tool(
            "capy_execute", {"language": "shell", "code": code, "intent": INTENT}
        )
        label = re.search(r"as `([^`]+)` \(ephemeral\)", text_of(executed)).group(1)
        searched = text_of(await client.call_tool("capy_search", {"queries": [INTENT]}))
    assert label in searched and "(ephemeral," in searched
    assert NEEDLE in searched
    assert LEFT_OUT not in searched


async def test_another_session_keeps_that_output_out_unless_asked(project_dir, server_home):
    code = f"cat {shlex.quote(str(OUTPUT))}"
    async with capy_session(project_dir, server_home) as client:
        await client.call_tool(
            "capy_execute", {"language": "shell", "code": code, "intent": INTENT}
        )
    async with capy_session(project_dir, server_home) as other:
        plain = text_of(await other.call_tool("capy_search", {"queries": [INTENT]}))
        asked = text_of(
            await other.call_tool(
                "capy_search", {"queries": [INTENT], "include_kinds": ["ephemeral"]}
            )
        )
    assert NEEDLE not in plain and LEFT_OUT in plain
    assert NEEDLE in asked
