"""`capy serve` drains the capsule pipeline in the background while it answers tool calls."""

from __future__ import annotations

import time

import anyio
import pytest
from server_helpers import capy_session, server_env, text_of

pytestmark = pytest.mark.anyio


async def test_the_server_distils_waiting_capsules_in_the_background(
    project_dir, server_home, monkeypatch
):
    from capy.capsules import CapsuleDraft, open_capsules

    for name, value in server_env(server_home).items():
        monkeypatch.setenv(name, value)
    with open_capsules(project_dir=project_dir) as store:
        store.write(
            [
                CapsuleDraft(kind="note", content=f"pytest failed {i}", source="cli")
                for i in range(4)
            ]
        )

    def chunked() -> int:
        with open_capsules(project_dir=project_dir) as store:
            return store.conn.execute(
                "SELECT count(*) FROM capsule_jobs WHERE stage = 'chunk' AND state = 'done'"
            ).fetchone()[0]

    async with capy_session(project_dir, server_home) as client:
        result = await client.call_tool("capy_stats", {})
        assert text_of(result)  # tool calls answer while the pipeline runs
        give_up = time.monotonic() + 90
        while time.monotonic() < give_up and await anyio.to_thread.run_sync(chunked) < 4:
            await anyio.sleep(0.2)
    assert chunked() == 4
