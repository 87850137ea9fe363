"""Hostile transcript lines: each costs that one line, counted in the output, never the file.

`capy vault import` and `capy sweep` run in real subprocesses under a timeout, on a transcript
with good turns around one bad line; the good turns must be archived (or indexed) all the same.
"""

from __future__ import annotations

import os
import re

import pytest

from tests.hostile_helpers import assert_no_crash, run_capy
from tests.vault.conftest import write_session

DEPTH = 100_000
BAD_LINES = {
    "deep-array": "[" * DEPTH + "]" * DEPTH,
    "deep-object": '{"a":' * DEPTH + "1" + "}" * DEPTH,
    "deep-unclosed": "[" * DEPTH,
    "deep-inside-a-record": '{"type":"user","message":' + "[" * DEPTH + "]" * DEPTH + "}",
    "huge-integer": "9" * 100_000,
    "not-json": "this is { not json",
}


@pytest.fixture
def transcript(tmp_path, request, warm_rules):
    source = tmp_path / "sessions"
    path = write_session(source, "hostile", turns=2, extra_line=BAD_LINES[request.param])
    os.utime(path, (1_700_000_000, 1_700_000_000))  # settled: sweep skips live sessions
    return source


@pytest.mark.parametrize("transcript", sorted(BAD_LINES), indirect=True)
def test_vault_import_archives_around_one_bad_line(transcript, tmp_path):
    run = run_capy("vault", "import", "--source", transcript, "--path", tmp_path / "v.db")
    assert_no_crash(run)
    assert run.code == 0, run.stderr
    assert run.stdout.startswith("archived 1 of 1 sessions"), run.stdout
    assert re.search(r"malformed lines archived but not indexed: 1\b", run.stdout), run.stdout


@pytest.mark.parametrize("transcript", sorted(BAD_LINES), indirect=True)
def test_sweep_indexes_around_one_bad_line(transcript, tmp_path):
    run = run_capy("sweep", "--source", transcript, "--db", tmp_path / "k.db")
    assert_no_crash(run)
    assert run.code == 0, run.stderr
    assert run.stdout.startswith("indexed 1 of 1 sessions"), run.stdout
    assert re.search(r"malformed lines skipped: 1\b", run.stdout), run.stdout
