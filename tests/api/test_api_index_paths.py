"""`capy_index(paths=[...])` through the library API: files and folders in one call."""

from __future__ import annotations

import pytest

from capy.api.knowledge import index_knowledge
from capy.api.reply import ToolInputError
from capy.api.workspace import Workspace


def test_several_paths_index_each_file_and_name_the_failures(project_dir) -> None:
    (project_dir / "docs").mkdir()
    (project_dir / "docs" / "a.md").write_text("# A\n\nRotate the signing key yearly.\n")
    (project_dir / "docs" / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    (project_dir / "NOTES.txt").write_text("The staging host is called bramble.\n")
    reply = index_knowledge(Workspace(project_dir), paths=["docs", "NOTES.txt"])
    assert not reply.is_error
    lines = reply.text.splitlines()
    assert lines[0] == "Indexed 2 source(s), 72 bytes stored; 1 failed."
    assert "- **docs/a.md** (markdown): indexed, 1 chunks, 36 bytes" in lines
    assert "- **NOTES.txt** (plaintext): indexed, 1 chunks, 36 bytes" in lines
    assert any(line.startswith("- **docs/blob.bin**: refusing to index") for line in lines)


def test_paths_go_alone(project_dir) -> None:
    with pytest.raises(ToolInputError, match="give `paths` alone"):
        index_knowledge(Workspace(project_dir), paths=["a"], content="x")
    with pytest.raises(ToolInputError, match="list of file or folder paths"):
        index_knowledge(Workspace(project_dir), paths=[])
