"""The memory tools over a real stdio session: add a lesson, find it, give feedback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from server_helpers import capy_session, text_of

pytestmark = pytest.mark.anyio


async def test_an_added_lesson_is_found_and_feedback_moves_its_confidence(project_dir):
    home = Path(os.environ["HOME"])
    async with capy_session(project_dir, home) as client:
        added = await client.call_tool(
            "capy_memory_add",
            {"text": "Run the migrations with `make migrate`, never by hand.", "type": "rule"},
        )
        found = await client.call_tool("capy_memory_search", {"query": "run the migrations"})
        nothing = await client.call_tool("capy_memory_search", {"query": "draw a pelican"})
        record = added.structured_content["record"]
        helped = await client.call_tool(
            "capy_memory_feedback", {"record": record["id"][:8], "verdict": "helpful"}
        )
        unknown = await client.call_tool(
            "capy_memory_feedback", {"record": "ffffffff", "verdict": "harmful"}
        )
    assert not added.is_error, text_of(added)
    assert record["type"] == "rule" and record["confidence"] == pytest.approx(0.8)
    assert [item["id"] for item in found.structured_content["records"]] == [record["id"]]
    assert nothing.structured_content == {"records": []}
    assert helped.structured_content["record"]["confidence"] == pytest.approx(0.9)
    assert unknown.is_error and "no memory record" in text_of(unknown)
