"""The session state file: written whole, never renamed over the old one, and readable at
every step a writer (or a crash) can leave behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from capy.hooks.state import PREVIOUS, forget_session, read_state, session_state, state_path


def test_a_write_moves_the_old_state_aside_and_keeps_one_previous(tmp_path):
    data_dir = str(tmp_path)
    for number in range(3):
        with session_state(data_dir, "s1") as state:
            state["n"] = number
    path = state_path(data_dir, "s1")
    assert read_state(data_dir, "s1") == {"n": 2}
    with open(path + PREVIOUS, "rb") as stream:
        assert json.loads(stream.read()) == {"n": 1}
    assert sorted(os.listdir(os.path.dirname(path))) == sorted(
        os.path.basename(name) for name in (path, path + PREVIOUS, path[:-5] + ".lock")
    )


def test_between_the_two_renames_a_reader_sees_the_old_state(tmp_path):
    data_dir = str(tmp_path)
    with session_state(data_dir, "s1") as state:
        state["n"] = 1
    path = state_path(data_dir, "s1")
    os.rename(path, path + PREVIOUS)  # a writer (or a crash) stopped after its first rename
    assert read_state(data_dir, "s1") == {"n": 1}
    with session_state(data_dir, "s1") as state:  # and the next writer carries on from it
        state["n"] += 1
    assert read_state(data_dir, "s1") == {"n": 2}


def test_a_state_cut_short_falls_back_to_the_previous_one(tmp_path):
    data_dir = str(tmp_path)
    for number in range(2):
        with session_state(data_dir, "s1") as state:
            state["n"] = number
    with open(state_path(data_dir, "s1"), "wb") as stream:
        stream.write(b'{"n": ')
    assert read_state(data_dir, "s1") == {"n": 0}


def test_forgetting_a_session_removes_every_file(tmp_path):
    data_dir = str(tmp_path)
    for number in range(2):
        with session_state(data_dir, "s1") as state:
            state["n"] = number
    forget_session(data_dir, "s1")
    assert os.listdir(os.path.dirname(state_path(data_dir, "s1"))) == []


READER = """
import sys
from capy.hooks.state import read_state
for _ in range(400):
    state = read_state(sys.argv[1], "s1")
    if not state.get("n"):
        print("saw no state"); break
"""


def test_readers_never_see_a_missing_state_while_writers_run(tmp_path):
    data_dir = str(tmp_path)
    with session_state(data_dir, "s1") as state:
        state["n"] = 1
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, data_dir], stdout=subprocess.PIPE, text=True
    )
    while reader.poll() is None:
        with session_state(data_dir, "s1") as state:
            state["n"] += 1
    assert reader.returncode == 0 and reader.stdout.read() == ""
