"""`capy_index` through a real stdio session leaves its trigram blocks to the server's catch-up:
the source is found by substring at once, and the blocks are all written when the server ends."""

from __future__ import annotations

import pytest
from server_helpers import capy_session, text_of

pytestmark = pytest.mark.anyio

BODY = "# Gauges\n\n" + "\n\n".join(
    f"## Part {n}\n\nThe quokkamatic{n} gauge reads {n * 7}." for n in range(80)
)


async def test_an_indexed_source_is_found_at_once_and_complete_at_exit(
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

    from capy.store import chunk_rowid_range, open_store
    from capy.store.trigram_backlog import pending_chunks
    from capy.store.trigram_blocks import block_rowid

    for name, folder in (("XDG_CONFIG_HOME", ".config"), ("XDG_DATA_HOME", ".local/share")):
        monkeypatch.setenv(name, str(server_home / folder))
    monkeypatch.setenv("HOME", str(server_home))
    with open_store(project_dir) as store:
        conn = store.conn
        assert pending_chunks(conn) == 0
        for (source_id,) in conn.execute("SELECT id FROM sources").fetchall():
            first, last = chunk_rowid_range(source_id)
            chunks = conn.execute(
                "SELECT rowid FROM chunks WHERE rowid BETWEEN ? AND ?", (first, last)
            ).fetchall()
            blocks = conn.execute(
                "SELECT rowid FROM chunks_trigram WHERE rowid BETWEEN ? AND ? ORDER BY 1",
                (first, last),
            ).fetchall()
            assert [row[0] for row in blocks] == sorted({block_rowid(r[0]) for r in chunks})
