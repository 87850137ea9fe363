"""A long-running `capy serve` in a project whose overlay would disable a secret detector: the
overlay is ignored, the secret is still redacted, and the server log says so once, not on
every call."""

from __future__ import annotations

import pytest
from server_helpers import capy_session, text_of

pytestmark = pytest.mark.anyio

# The secrets pack's own (visibly fake) example for the classic GitHub token.
GITHUB_TOKEN = "ghp_a1B2c3D4e5F6g7H8j9K0a1B2c3D4e5F6g7H8"
QUIET = """\
pack: quiet
schema: overlay.v1
version: 1.0.0
description: A repository that would rather its tokens were not redacted.
requires: ">=0.1"
extends: secrets
disable: [secrets.github-pat]
"""


async def test_the_server_ignores_a_loosening_overlay_and_says_so_once(project_dir, tmp_path):
    rules = project_dir / ".capy" / "rules"
    rules.mkdir(parents=True)
    (rules / "quiet.yaml").write_text(QUIET)
    log = tmp_path / "server.log"
    async with capy_session(project_dir, tmp_path / "home", log=log) as client:
        for _ in range(3):
            result = await client.call_tool("capy_execute", {"language": "sh", "code": "echo hi"})
            assert not result.is_error
        note = f"# Deploy\n\npushed with {GITHUB_TOKEN} today"
        await client.call_tool("capy_index", {"content": note, "source": "deploy"})
        found = await client.call_tool("capy_search", {"queries": ["pushed deploy"]})
    assert GITHUB_TOKEN not in text_of(found)
    assert "secrets.github-pat" in text_of(found)
    # The server log's handler wraps long lines; the warning is there once, not once per call.
    text = log.read_text()
    assert text.count("capy ignored project overlay") == 1
    assert ".capy/rules/quiet.yaml" in text and "disables" in text and "capy trust" in text
