"""Long output without an intent, over a real `capy serve` stdio session: indexed, and the reply
carries its start, its end, the errors it reports, its source label and the search that finds
the rest, instead of up to 100 KB of it."""

from __future__ import annotations

import json
import re

import pytest
from server_helpers import capy_session, text_of

pytestmark = pytest.mark.anyio

# 6,000 lines (about 200 KB): one error in the middle, a summary at the end.
NOISY = (
    "for i in range(1, 6001):\n"
    "    print(f'step {i}: replicated shard {i % 37} to node {i % 5} in {i % 97} ms')\n"
    "    if i == 3100:\n"
    "        print('ERROR: checksum mismatch on shard 29 (expected 9f3c, got 11ab)')\n"
    "print('summary: 6000 shards replicated, 1 checksum error')\n"
)


def _search_call(reply: str) -> dict:
    """The arguments of the capy_search call the reply suggests, parsed back."""
    found = re.search(
        r"capy_search\(queries=(\[.*?\]), source=(\".*?\"), include_kinds=(\[.*?\])\)", reply
    )
    assert found, reply
    queries, source, kinds = (json.loads(part) for part in found.groups())
    return {"queries": queries, "source": source, "include_kinds": kinds}


async def test_long_output_without_an_intent_is_indexed_and_summarised(project_dir, server_home):
    async with capy_session(project_dir, server_home) as client:
        reply = await client.call_tool("capy_execute", {"language": "python", "code": NOISY})
        text = text_of(reply)
        call = _search_call(text)
        call["queries"] = ["checksum mismatch shard"]
        found = text_of(await client.call_tool("capy_search", call))
        short = text_of(
            await client.call_tool("capy_execute", {"language": "sh", "code": "seq 1 500"})
        )
    assert not reply.is_error and "exit 0" in text
    assert "cut from the middle" not in text  # it was indexed whole, not cut
    size = len(text.encode("utf-8"))
    assert size < 8 * 1024, size  # the pack's head + tail + errors, not 100 KB
    assert "step 1: replicated shard 1 to node 1" in text  # the start
    assert "summary: 6000 shards replicated" in text  # the end
    assert "ERROR: checksum mismatch on shard 29" in text  # the error from the middle
    assert "step 3000:" not in text  # the middle itself stays out
    assert call["source"].startswith("execute:python:") and f"`{call['source']}`" in text
    assert call["include_kinds"] == ["ephemeral"]
    # The suggested search reaches the part that was left out.
    assert "checksum mismatch on shard 29" in found
    # Under the pack's index_threshold_bytes (12 KB) the output is the reply, whole.
    assert "\n1\n2\n" in short and "\n500\n" in short and "Indexed" not in short


async def test_execute_file_shares_the_long_output_path(project_dir, server_home):
    (project_dir / "big.log").write_text(
        "".join(f"request {i} served in {i % 50} ms\n" for i in range(5000)), encoding="utf-8"
    )
    async with capy_session(project_dir, server_home) as client:
        reply = await client.call_tool(
            "capy_execute_file",
            {"path": "big.log", "language": "python", "code": "print(FILE_CONTENT, end='')"},
        )
    text = text_of(reply)
    assert "Indexed" in text and "request 0 served" in text and "request 4999 served" in text
    assert len(text.encode("utf-8")) < 8 * 1024
    assert _search_call(text)["source"].startswith("file:python:")


async def test_the_tool_descriptions_say_so(project_dir, server_home):
    from capy.rules import load_rules

    # The descriptions name the shipped threshold: a pack change must change them too.
    output = load_rules(project_dir).view("executor").limits.output
    assert output.index_threshold_bytes == 12 * 1024
    async with capy_session(project_dir, server_home) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert "Without an intent, output over 12 KB" in tools["capy_execute"].description
    assert "without one, output over 12 KB" in tools["capy_execute_file"].description
