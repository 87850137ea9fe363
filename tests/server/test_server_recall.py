"""capy_recall over a real stdio session: capsules kept earlier come back as a brief in budget."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from server_helpers import capy_session, text_of

from capy.capsules import CapsuleDraft, open_capsules
from capy.capsules.pipeline import drain

pytestmark = pytest.mark.anyio


async def test_recall_returns_a_brief_and_items_within_budget(project_dir):
    home = Path(os.environ["HOME"])  # the test's own home: the server reads the same log
    async with capy_session(project_dir, home) as client:
        before = await client.call_tool("capy_recall", {"query": "flaky upload test"})
    assert not before.is_error and "Nothing to recall yet" in text_of(before)
    with open_capsules(project_dir=project_dir) as store:
        store.write(
            [
                CapsuleDraft(
                    "decision",
                    "Mark the flaky upload test as xfail until the S3 mock is replaced.",
                    "cli",
                    {"session_id": "s-1"},
                ),
                CapsuleDraft("note", "The release checklist lives in docs/release.md.", "cli"),
            ]
        )
        drain(store)
    async with capy_session(project_dir, home) as client:
        found = await client.call_tool(
            "capy_recall", {"query": "what about the flaky upload test", "budget_tokens": 200}
        )
        by_id = await client.call_tool(
            "capy_recall", {"query": found.structured_content["items"][0]["capsule_id"][:12]}
        )
        nothing = await client.call_tool("capy_recall", {"query": "kubernetes ingress"})
        wrong = await client.call_tool("capy_recall", {"query": "upload", "kinds": ["memo"]})
    assert not found.is_error, text_of(found)
    data = found.structured_content
    assert data["tokens"] <= data["budget_tokens"] == 200
    top = data["items"][0]
    assert (top["kind"], top["session_id"]) == ("decision", "s-1")
    assert top["capsule_id"][:12] in text_of(found)
    assert "xfail" in text_of(by_id)
    assert text_of(nothing).startswith("Nothing in the capsule log matched")
    assert wrong.is_error and "memo" in text_of(wrong)
