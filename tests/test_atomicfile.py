"""The one way capy gives a file new content: whole or not at all, private, nothing left behind."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from capy.atomicfile import write_atomically, written_temporary


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_new_content_replaces_old_and_is_private(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_bytes(b"old")
    os.chmod(target, 0o644)
    write_atomically(target, b"new")
    assert target.read_bytes() == b"new"
    assert mode_of(target) == 0o600
    assert os.listdir(tmp_path) == ["state.json"]


def test_a_named_mode_holds_whatever_the_umask(tmp_path: Path) -> None:
    previous = os.umask(0o077)
    try:
        write_atomically(tmp_path / "settings.json", b"{}", mode=0o644)
    finally:
        os.umask(previous)
    assert mode_of(tmp_path / "settings.json") == 0o644


def test_durable_write_keeps_the_same_promise(tmp_path: Path) -> None:
    write_atomically(str(tmp_path / "record"), b"x" * 10_000, durable=True)
    assert (tmp_path / "record").read_bytes() == b"x" * 10_000


def test_a_failed_rename_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.mkdir()  # a folder cannot be replaced by a file
    with pytest.raises(OSError):
        write_atomically(target, b"data")
    assert target.is_dir()
    assert os.listdir(tmp_path) == ["taken"]


def test_a_failed_write_leaves_no_temporary(tmp_path: Path) -> None:
    # Text where bytes belong fails inside the write, after the temporary file exists.
    with pytest.raises(TypeError):
        written_temporary(tmp_path / "file", "text")  # type: ignore[arg-type]
    assert os.listdir(tmp_path) == []


def test_temporaries_are_hidden_and_distinct(tmp_path: Path) -> None:
    first = written_temporary(tmp_path / "file", b"a")
    second = written_temporary(tmp_path / "file", b"b")
    assert first != second
    assert all(os.path.basename(name).startswith(".file.") for name in (first, second))


def test_a_symbolic_link_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    # A settings file kept in a dotfiles folder and linked into place.
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "settings.json"
    real.write_bytes(b'{"a": 1}')
    link = tmp_path / "settings.json"
    link.symlink_to(real)
    write_atomically(link, b'{"a": 2}')
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() == b'{"a": 2}'
    assert sorted(os.listdir(dotfiles)) == ["settings.json"]
