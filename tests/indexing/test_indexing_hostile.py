"""Hostile paths and oversized input for `capy index` and `capy redact`, in real subprocesses.

Whatever a PATH names (a FIFO, an endless device, a directory, a missing file), the command
answers at once with one sentence and exit 2, and never reads more than its cap; an input over
the per-source cap is indexed with a note on what was kept and how to keep all (`--split`).
"""

from __future__ import annotations

import os
import re

import pytest

from tests.hostile_helpers import assert_clean_refusal, assert_no_crash, run_capy

CAP = 2 * 1024 * 1024  # the retention pack's size.max_source_bytes


def _special_path(kind: str, tmp_path) -> str:
    if kind == "fifo":  # an open for reading would wait for a writer forever
        path = tmp_path / "pipe.log"
        os.mkfifo(path)
        return str(path)
    if kind == "symlink-to-dev-zero":
        path = tmp_path / "zero.log"
        path.symlink_to("/dev/zero")
        return str(path)
    return {
        "dev-zero": "/dev/zero",
        "dev-urandom": "/dev/urandom",
        "directory": str(tmp_path),
        "missing": str(tmp_path / "missing.log"),
    }[kind]


SPECIAL = ["fifo", "dev-zero", "dev-urandom", "symlink-to-dev-zero", "directory", "missing"]


@pytest.mark.parametrize("kind", SPECIAL)
@pytest.mark.parametrize("command", ["index", "redact"])
def test_a_path_that_is_not_a_regular_file_is_refused_at_once(command, kind, tmp_path, warm_rules):
    if command == "index" and kind == "directory":
        pytest.skip("index takes a folder: its files are indexed (the test below)")
    path = _special_path(kind, tmp_path)
    run = run_capy(command, path, "--db", tmp_path / "k.db") if command == "index" else None
    run = run or run_capy(command, path)
    assert_clean_refusal(run, code=2, says=f"cannot {command} {path}")
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr


def test_a_folder_holding_only_the_store_indexes_nothing_of_it(tmp_path, warm_rules):
    """The knowledge base's own files (database, WAL, key check) are never indexed into it."""
    run = run_capy("index", tmp_path, "--db", tmp_path / "k.db")
    assert_clean_refusal(run, code=2, says=f"nothing to index in {tmp_path}")
    (tmp_path / "notes.txt").write_text("The deploy runs at noon.\n", encoding="utf-8")
    run = run_capy("index", tmp_path, "--db", tmp_path / "k.db")
    assert run.code == 0, run.stderr
    assert "1 source indexed" in run.stdout and "k.db" not in run.stdout


@pytest.fixture
def big_log(tmp_path):
    """A 4.5 MiB log whose start and end say something worth keeping."""
    path = tmp_path / "big.log"
    middle = "".join(f"line {number} worker ok\n" for number in range(220_000))
    path.write_text("START of the run\n" + middle + "FATAL at the END\n", encoding="utf-8")
    return path


def test_an_oversized_file_says_what_was_kept_and_how_to_keep_all(big_log, tmp_path, warm_rules):
    size = big_log.stat().st_size
    run = run_capy("index", big_log, "--db", tmp_path / "k.db")
    assert_no_crash(run)
    assert run.code == 0, run.stderr
    note = run.stdout.splitlines()[-1]
    found = re.search(
        r"kept its start and end, [\d.]+ MiB \(([\d,]+) bytes\) of [\d.]+ MiB \(([\d,]+) bytes\), "
        r"and dropped [\d.]+ MiB \(([\d,]+) bytes\)",
        note,
    )
    assert found, note
    kept, total, dropped = (int(group.replace(",", "")) for group in found.groups())
    assert total == size and kept + dropped == size and kept <= CAP
    assert "--split" in note
    search = run_capy("search", "FATAL END", "--db", tmp_path / "k.db")
    assert "FATAL at the END" in search.stdout  # the tail was kept
    assert "START of the run" in run_capy("search", "START run", "--db", tmp_path / "k.db").stdout


def test_split_keeps_every_byte_in_parts_under_the_cap(big_log, tmp_path, warm_rules):
    run = run_capy("index", big_log, "--split", "--json", "--db", tmp_path / "k.db")
    assert_no_crash(run)
    assert run.code == 0, run.stderr
    import json

    parts = json.loads(run.stdout)["parts"]
    assert [part["label"] for part in parts] == [f"{big_log} (part {n})" for n in (1, 2, 3)]
    assert sum(part["bytes"] for part in parts) == big_log.stat().st_size
    assert all(part["bytes"] <= CAP and part["omitted_bytes"] == 0 for part in parts)


def test_oversized_standard_input_is_read_only_to_the_cap(tmp_path, warm_rules):
    data = b"y\n" * (3 * CAP)
    run = run_capy("index", "-", "--source", "piped", "--db", tmp_path / "k.db", stdin=data)
    assert_no_crash(run)
    assert run.code == 0, run.stderr
    assert "kept the first" in run.stdout and "did not read the rest" in run.stdout


def test_redact_refuses_standard_input_over_its_cap(tmp_path, warm_rules):
    from capy.cli.redact import MAX_REDACT_BYTES

    run = run_capy("redact", "-", stdin=b"x" * (MAX_REDACT_BYTES + 1))
    assert_clean_refusal(run, code=2, says="cannot redact standard input")
