"""Progress for one long run: a client that sends a progress token hears from capy_execute
while the command runs (seconds elapsed, output seen), not only from batches."""

from __future__ import annotations

import pytest
from server_helpers import capy_session, text_of

pytestmark = pytest.mark.anyio

# About 2.5 s, printing as it goes, so the reports can show output arriving.
SLOW = "for i in 1 2 3 4 5; do echo tick-$i; sleep 0.5; done"


async def test_a_long_single_run_reports_progress(project_dir, server_home):
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with capy_session(project_dir, server_home) as client:
        result = await client.call_tool(
            "capy_execute", {"language": "sh", "code": SLOW}, progress_callback=on_progress
        )
        quiet = len(seen)
        # Without a progress callback the client sends no token, and no report comes.
        await client.call_tool("capy_execute", {"language": "sh", "code": SLOW})
    assert not result.is_error and "tick-5" in text_of(result)
    assert quiet >= 1, seen
    assert len(seen) == quiet
    progress = [item[0] for item in seen]
    assert progress == sorted(progress) and len(set(progress)) == len(progress)  # increasing
    assert all(total is None for _, total, _ in seen)
    assert all(message and message.startswith("running for ") for *_, message in seen)
    assert seen[-1][2].endswith(" of output") and "0 B of output" not in seen[-1][2], seen
