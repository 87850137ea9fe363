"""The machine against the store: `--db` naming a folder, a read-only folder, a full disk, a
damaged page inside a real SQLCipher file. Every command answers with one sentence and what to
do (exit 2), never a traceback or "internal error", in real subprocesses under a timeout.

Read-only and full disks are real mounts (a tmpfs remounted read-only, a tiny tmpfs): root
ignores file permissions, so a chmod would prove nothing here. Those tests skip where mounting
is not allowed.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path

import pytest

from tests.hostile_helpers import assert_clean_refusal, assert_no_crash, run_capy

# Each command that opens the knowledge base, as argv after `capy`.
STORE_COMMANDS = {
    "stats": ["stats"],
    "search": ["search", "quokka"],
    "index": ["index", "NOTE"],
    "cleanup": ["cleanup"],
    "reindex": ["reindex", "--all"],
}


def _argv(name: str, note: Path, db: Path) -> list:
    return [note if part == "NOTE" else part for part in STORE_COMMANDS[name]] + ["--db", db]


@pytest.fixture
def note(tmp_path) -> Path:
    path = tmp_path / "note.txt"
    path.write_text("the quokka sleeps in the afternoon\n", encoding="utf-8")
    return path


@contextlib.contextmanager
def tmpfs(mountpoint: Path, *options: str):
    mountpoint.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", ",".join(options), "tmpfs", str(mountpoint)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root and mount rights): {done.stderr!r}")
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], check=False)


@pytest.mark.parametrize("command", sorted(STORE_COMMANDS))
def test_db_naming_a_folder_is_one_sentence(command, note, tmp_path, warm_rules):
    run = run_capy(*_argv(command, note, tmp_path))
    assert_clean_refusal(run, code=2, says="is a folder, not a database file")


@pytest.mark.parametrize("command", ["list", "stats", "search"])
def test_vault_path_naming_a_folder_is_one_sentence(command, tmp_path, warm_rules):
    extra = ["quokka"] if command == "search" else []
    run = run_capy("vault", command, *extra, "--path", tmp_path)
    assert_no_crash(run)
    assert run.code != 0
    assert "is a folder, not a database file" in run.stderr and "CAPY_VAULT_PATH" in run.stderr


@pytest.mark.parametrize("command", sorted(STORE_COMMANDS))
def test_a_read_only_folder_is_one_sentence(command, note, tmp_path, warm_rules):
    with tmpfs(tmp_path / "ro", "size=1m") as folder:
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        run = run_capy(*_argv(command, note, folder / "knowledge.db"))
    assert_clean_refusal(run, code=2, says="is read-only or not writable")


def test_a_full_disk_is_one_sentence_and_keeps_the_store(tmp_path, warm_rules):
    big = tmp_path / "big.txt"
    big.write_text("".join(f"word{n} line {n}\n" for n in range(60_000)), encoding="utf-8")
    with tmpfs(tmp_path / "full", "size=400k") as folder:
        db = folder / "knowledge.db"
        small = run_capy("index", "-", "--source", "small", "--db", db, stdin=b"quokka notes\n")
        assert small.code == 0, small.stderr
        run = run_capy("index", big, "--db", db)
        assert_clean_refusal(run, code=2, says="is full")
        after = run_capy("search", "quokka", "--db", db)
    assert_no_crash(after)
    assert "quokka notes" in after.stdout  # what was stored before is still there


def _damaged_store(tmp_path: Path) -> Path:
    db = tmp_path / "damaged.db"
    big = tmp_path / "big.txt"
    big.write_text("".join(f"word{n} line {n}\n" for n in range(60_000)), encoding="utf-8")
    assert run_capy("index", big, "--db", db).code == 0
    size = db.stat().st_size
    with db.open("r+b") as handle:  # a page in the middle, as a failing disk would leave it
        handle.seek(size // 2)
        handle.write(os.urandom(16_384))
    return db


@pytest.mark.parametrize("command", sorted(STORE_COMMANDS))
def test_a_damaged_page_is_one_sentence(command, note, tmp_path, warm_rules):
    db = _damaged_store(tmp_path)
    run = run_capy(*_argv(command, note, db))
    assert_no_crash(run)
    # Some commands never touch the damaged page and succeed; the others say what to do.
    assert run.code in (0, 2), run.stderr
    if run.code == 2:
        assert "capy doctor" in run.stderr or "damaged" in run.stderr, run.stderr


@pytest.mark.parametrize("command", sorted(STORE_COMMANDS))
def test_a_store_path_running_through_a_file_is_one_sentence(command, note, tmp_path, warm_rules):
    # A data folder set to a file's path: the store's folder cannot be made under it.
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be\n", encoding="utf-8")
    run = run_capy(*_argv(command, note, blocker / "project" / "knowledge.db"))
    assert_clean_refusal(run, code=2, says="runs through a file where a folder should be")
