"""`capy_index` through a real stdio session leaves its trigram blocks to the server's catch-up:
the source is found by substring at once, every chunk is always in a written block or in its
marker's unwritten rest, and a server writes what an earlier one left."""

from __future__ import annotations

import anyio
import pytest
from server_helpers import capy_session, text_of

pytestmark = pytest.mark.anyio

BODY = "# Gauges\n\n" + "\n\n".join(
    f"## Part {n}\n\nThe quokkamatic{n} gauge reads {n * 7}." for n in range(80)
)


def _blocks(project_dir, server_home, monkeypatch) -> tuple[int, list[tuple[list, list]]]:
    """(chunks pending, per source: (blocks written or pending, blocks its chunks need))."""
    from capy.store import chunk_rowid_range, open_store
    from capy.store.trigram_backlog import backlog, pending_chunks
    from capy.store.trigram_blocks import block_rowid

    for name, folder in (("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share")):
        monkeypatch.setenv(name, str(server_home / folder))
    monkeypatch.setenv("HOME", str(server_home))
    with open_store(project_dir) as store:
        conn = store.conn
        pending = set(backlog(conn, ("1", [])).blocks)
        sources = []
        for (source_id,) in conn.execute("SELECT id FROM sources").fetchall():
            first, last = chunk_rowid_range(source_id)
            chunks = conn.execute(
                "SELECT rowid FROM chunks WHERE rowid BETWEEN ? AND ?", (first, last)
            ).fetchall()
            written = conn.execute(
                "SELECT rowid FROM chunks_trigram WHERE rowid BETWEEN ? AND ?", (first, last)
            ).fetchall()
            held = {row[0] for row in written} | {b for b in pending if first <= b <= last}
            sources.append((sorted(held), sorted({block_rowid(row[0]) for row in chunks})))
        return pending_chunks(conn), sources


async def test_indexed_sources_are_found_at_once_and_their_blocks_follow(
    project_dir, server_home, monkeypatch
):
    async with capy_session(project_dir, server_home) as client:
        for number in range(3):
            indexed = await client.call_tool(
                "capy_index", {"content": f"{BODY}\n\nlast{number}", "source": f"g{number}.md"}
            )
            assert not indexed.is_error, text_of(indexed)
        # Only the trigram list finds a word's inside ("okkamatic" of "quokkamatic41").
        found = await client.call_tool("capy_search", {"queries": ["okkamatic41"]})
        assert "quokkamatic41" in text_of(found)
    _, sources = _blocks(project_dir, server_home, monkeypatch)
    assert len(sources) == 3
    for held, needed in sources:
        assert held == needed

    # Whatever the first server left at its exit, the next one writes once it is listed.
    async with capy_session(project_dir, server_home) as client:
        await client.list_tools()
        with anyio.fail_after(60):
            while _blocks(project_dir, server_home, monkeypatch)[0]:
                await anyio.sleep(0.2)
    pending, sources = _blocks(project_dir, server_home, monkeypatch)
    assert pending == 0
    assert all(held == needed for held, needed in sources)
