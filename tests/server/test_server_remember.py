"""capy_remember over a real stdio session: a note or decision becomes an `mcp` capsule."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from planted_secrets import fresh_secrets, raw_in
from server_helpers import capy_session, text_of

from capy.capsules import open_capsules

pytestmark = pytest.mark.anyio


async def test_remember_keeps_a_redacted_capsule_and_names_its_id(project_dir):
    found = fresh_secrets()
    home = Path(os.environ["HOME"])  # the test's own home: the log is readable from here
    async with capy_session(project_dir, home) as client:
        kept = await client.call_tool(
            "capy_remember",
            {
                "kind": "decision",
                "content": f"Use tabs in the parser; the deploy token is {found['github']}.",
                "tags": ["parser", " style "],
            },
        )
        again = await client.call_tool(
            "capy_remember",
            {"kind": "decision", "content": "Use tabs in the parser.", "tags": []},
        )
        wrong = await client.call_tool("capy_remember", {"kind": "prompt", "content": "x"})
        empty = await client.call_tool("capy_remember", {"kind": "note", "content": "  "})
    assert not kept.is_error, text_of(kept)
    capsule_id = kept.structured_content["id"]
    assert capsule_id in text_of(kept)
    assert kept.structured_content == {"id": capsule_id, "kind": "decision", "new": True}
    assert not again.is_error and again.structured_content["id"] != capsule_id
    assert wrong.is_error
    assert empty.is_error and "content" in text_of(empty)
    with open_capsules(project_dir=project_dir) as store:
        _, capsule = store.find(capsule_id)
    assert (capsule.source, capsule.kind) == ("mcp", "decision")
    assert capsule.metadata["tags"] == ["parser", "style"]
    assert raw_in(capsule.content, found) == []
    assert "[REDACTED:" in capsule.content


async def test_remembering_the_same_thing_again_keeps_it_once(project_dir):
    """capy_remember is annotated idempotent: the same kind, words and tags again (a retry, or
    a later session) name the capsule kept before and add nothing; other tags are a new one."""
    home = Path(os.environ["HOME"])
    note = {"kind": "note", "content": "The build needs libfoo 2.3.", "tags": ["build"]}
    async with capy_session(project_dir, home) as client:
        first = await client.call_tool("capy_remember", note)
        second = await client.call_tool("capy_remember", {**note, "tags": [" build"]})
        tagged = await client.call_tool("capy_remember", {**note, "tags": ["deps"]})
    capsule_id = first.structured_content["id"]
    assert first.structured_content["new"] is True
    assert second.structured_content == {"id": capsule_id, "kind": "note", "new": False}
    assert text_of(second).startswith(f"Already kept as note capsule `{capsule_id}`")
    assert tagged.structured_content["new"] is True
    assert tagged.structured_content["id"] != capsule_id
    with open_capsules(project_dir=project_dir) as store:
        notes = [c for _, c in store.backend.scan() if c.source == "mcp"]
        assert len(notes) == 2
        store.forget(capsule_id, "test")
    async with capy_session(project_dir, home) as client:
        after = await client.call_tool("capy_remember", note)
    assert after.structured_content["new"] is True  # a forgotten capsule is no longer kept
