"""The session state file: written whole, never renamed over the old one, and readable at
every step a writer (or a crash) can leave behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from capy.hooks.state import (
    JOURNAL,
    PREVIOUS,
    append_event,
    forget_session,
    read_state,
    session_state,
    state_path,
)


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
    append_event(data_dir, "s1", {"category": "c", "text": "t", "at": 1.0, "keep": 1})
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


def entry(text: str, at: float = 1.0) -> dict:
    return {"category": "file-edit", "text": text, "at": at, "keep": 3}


def test_an_appended_event_joins_the_state_when_it_is_read(tmp_path):
    data_dir = str(tmp_path)
    for number in range(5):
        append_event(data_dir, "s1", entry(f"file-{number}", at=number))
    state = read_state(data_dir, "s1")
    assert [item["text"] for item in state["events"]["file-edit"]] == ["file-2", "file-3", "file-4"]
    assert state["event_count"] == 5
    with session_state(data_dir, "s1") as state:  # a writer folds them into the file
        state["guided"] = ["x"]
    append_event(data_dir, "s1", entry("file-2", at=9))  # the same text moves to the end
    state = read_state(data_dir, "s1")
    assert [item["text"] for item in state["events"]["file-edit"]] == ["file-3", "file-4", "file-2"]
    assert state["event_count"] == 6 and state["guided"] == ["x"]


def test_a_state_that_fell_back_replays_what_the_newer_one_had_folded(tmp_path):
    data_dir = str(tmp_path)
    with session_state(data_dir, "s1") as state:
        state["guided"] = []
    append_event(data_dir, "s1", entry("a"))
    with session_state(data_dir, "s1") as state:
        state["guided"] = ["x"]
    path = state_path(data_dir, "s1")
    os.replace(path + PREVIOUS, path)  # the newer state lost: the older one, folded nothing
    assert read_state(data_dir, "s1")["events"]["file-edit"][0]["text"] == "a"


def test_a_line_cut_short_is_passed_over(tmp_path):
    data_dir = str(tmp_path)
    append_event(data_dir, "s1", entry("a"))
    with open(state_path(data_dir, "s1") + JOURNAL, "ab") as stream:
        stream.write(b'{"category": "file-ed')
    assert read_state(data_dir, "s1")["event_count"] == 1


APPENDER = """
import sys
from capy.hooks.state import append_event
for number in range(100):
    append_event(sys.argv[1], "s1", {"category": "c", "text": sys.argv[2] + str(number),
                                     "at": 1.0, "keep": 1000})
"""


def test_events_appended_by_processes_while_a_writer_folds_are_all_kept(tmp_path):
    data_dir = str(tmp_path)
    running = [subprocess.Popen([sys.executable, "-c", APPENDER, data_dir, name]) for name in "ab"]
    while any(process.poll() is None for process in running):
        with session_state(data_dir, "s1") as state:
            state["writes"] = state.get("writes", 0) + 1
    assert all(process.returncode == 0 for process in running)
    state = read_state(data_dir, "s1")
    assert state["event_count"] == 200 and len(state["events"]["c"]) == 200
