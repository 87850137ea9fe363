"""Hostile paths and oversized files through the MCP tools, over a real stdio session: one
sentence each, at once, and the server keeps answering (it must not block or be OOM-killed)."""

from __future__ import annotations

import os

import pytest
from server_helpers import capy_session, text_of

pytestmark = pytest.mark.anyio

SPECIAL = {
    "fifo": "pipe.log",
    "dev-zero": "/dev/zero",
    "directory": ".",
    "missing": "missing.log",
}


async def test_index_and_execute_file_refuse_what_is_not_a_regular_file(project_dir, server_home):
    os.mkfifo(project_dir / "pipe.log")
    async with capy_session(project_dir, server_home) as client:
        for kind, path in SPECIAL.items():
            for tool, arguments in (
                ("capy_index", {"path": path}),
                ("capy_execute_file", {"path": path, "language": "python", "code": "print(1)"}),
            ):
                result = await client.call_tool(tool, arguments)
                text = text_of(result)
                assert result.is_error, (tool, kind, text)
                assert "cannot" in text and "internal error" not in text.lower(), (tool, kind)
                assert "unexpectedly" not in text, text
        alive = await client.call_tool("capy_execute", {"language": "sh", "code": "echo alive"})
        assert "alive" in text_of(alive)


async def test_an_oversized_file_reports_what_was_kept_and_split_keeps_all(
    project_dir, server_home
):
    path = project_dir / "big.log"
    path.write_text("".join(f"line {n} worker ok\n" for n in range(260_000)), encoding="utf-8")
    size = path.stat().st_size
    async with capy_session(project_dir, server_home) as client:
        truncated = text_of(await client.call_tool("capy_index", {"path": "big.log"}))
        arguments = {"path": "big.log", "source": "all", "split": True}
        split = text_of(await client.call_tool("capy_index", arguments))
    assert f"({size:,} bytes), and dropped" in truncated, truncated
    assert "split=true" in truncated
    assert f"{size:,} bytes" not in truncated.splitlines()[0]  # the first line: what was stored
    assert "Indexed 3 part(s)" in split and "**all (part 3)**" in split, split
    assert f"{size:,} bytes stored" in split


async def test_a_store_path_naming_a_folder_is_one_sentence(project_dir, server_home, tmp_path):
    async with capy_session(project_dir, server_home, CAPY_DB_PATH=str(tmp_path)) as client:
        for tool, arguments in (
            ("capy_index", {"content": "quokka notes", "source": "notes"}),
            ("capy_search", {"queries": ["quokka"]}),
            ("capy_cleanup", {}),
        ):
            result = await client.call_tool(tool, arguments)
            text = text_of(result)
            assert result.is_error, (tool, text)
            assert "is a folder, not a database file" in text, (tool, text)
            assert "unexpectedly" not in text and "internal error" not in text.lower()
