"""A real stdio session keeps the knowledge base open between calls and closes it at exit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from server_helpers import capy_session, text_of

pytestmark = pytest.mark.anyio


def _server_pids() -> list[int]:
    """The `capy serve` processes this test started (children of the test process)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == os.getpid() and b"serve" in command:
            found.append(int(entry.name))
    return found


def _open_database_files(pid: int) -> list[str]:
    targets = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            targets.append(os.readlink(fd))
        except OSError:
            continue
    return [target for target in targets if target.endswith("knowledge.db")]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to see open files")
async def test_connections_stay_open_between_calls_and_close_at_exit(project_dir, server_home):
    body = "# Notes\n\n" + "\n\n".join(f"## Part {n}\n\nthe zebra number {n}" for n in range(50))
    async with capy_session(project_dir, server_home) as client:
        indexed = await client.call_tool("capy_index", {"content": body, "source": "notes.md"})
        assert not indexed.is_error, text_of(indexed)
        for _ in range(3):
            found = await client.call_tool("capy_search", {"queries": ["zebra number 7"]})
            assert "zebra" in text_of(found)
        [pid] = _server_pids()
        held = _open_database_files(pid)
        # One connection served the sequential calls, kept open for the next one; the trigram
        # catch-up (capy.server.trigram_upkeep) takes a second when it ran beside a call.
        assert 1 <= len(held) <= 2, held
        database = Path(held[0])
        stats = await client.call_tool("capy_stats", {})
        assert stats.structured_content["knowledge_base"]["chunks"] > 0
    assert not Path(f"/proc/{pid}").exists() or _open_database_files(pid) == []
    # The last connection closed cleanly: SQLite checkpointed and removed the WAL.
    assert database.exists()
    assert not Path(f"{database}-wal").exists()
