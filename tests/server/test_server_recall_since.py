"""A bad `since` is named as it was given: `since` to the agent, `--since` on the command line
(the error said `created_at`, a name neither of them used)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from server_helpers import capy_session, text_of

from capy.capsules import CapsuleDraft, open_capsules
from capy.cli import main

SAID = "'last tuesday' is not an ISO 8601 time: write it as 2026-05-01T12:00:00Z"


def _keep_one(project_dir: Path) -> None:
    with open_capsules(project_dir=project_dir) as store:
        store.write(
            [CapsuleDraft("note", "The release checklist lives in docs/release.md.", "cli")]
        )


@pytest.mark.anyio
async def test_the_tool_names_since(project_dir):
    _keep_one(project_dir)
    async with capy_session(project_dir, Path(os.environ["HOME"])) as client:
        reply = await client.call_tool(
            "capy_recall", {"query": "release checklist", "since": "last tuesday"}
        )
    assert reply.is_error
    assert f"since {SAID}" in text_of(reply) and "created_at" not in text_of(reply)


def test_the_command_names_the_option(project_dir, capsys):
    _keep_one(project_dir)
    assert main(["recall", "--since", "last tuesday", "release checklist"]) == 2
    assert capsys.readouterr().err.strip() == f"capy: --since {SAID}"
