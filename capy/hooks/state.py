"""Once-per-session state: one small JSON file per session id under capy's data dir.

Hooks of one session can run at the same time (parallel tool calls each start a process), so
every read-modify-write holds an exclusive `flock` on a lock file beside the state, and a new
state is written whole to a temp file before it takes the state's name: a reader sees the old or
the new file, never half of one. Files are private to the user (0600 in a 0700 folder): they
hold short lines about the session (file names, commands, the user's requests).

The temp file never takes the name by renaming over the old state. On ext4 (the default
`auto_da_alloc`), a rename that replaces a file first writes the new file's data out, which
cost a PostToolUse hook 1-85 ms on a busy disk, more than the rest of the hook. So the old state
steps aside first (`<state>.prev`, the previous one removed), then the temp file takes the free
name: two renames that replace nothing. A reader that finds no state between the two reads the
one that stepped aside, which is the old state; so does one after a crash between them.

A tool call's event (PostToolUse, the most frequent hook) is not a rewrite at all: one line
appended to `<state>.events`, with no lock, no file created, renamed or removed after the
session's first. Whoever reads the state replays the lines past the offset the state records
(`folded`), and a writer stores the result with the new offset, in the same file: a state that
fell back to `.prev` has the older offset, so it replays the lines the newer one had folded.
Only whole lines count; an append is one `write` of a short line with O_APPEND.

Paths are plain strings: `pathlib` would cost more to import than the whole state update. The
temp file comes from `capy.atomicfile`, imported only where a state is rewritten or removed, so
an append (the common case) imports nothing more.
"""

from __future__ import annotations

import fcntl
import os
import time
import zlib

from capy.leanjson import dumps, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# A hook must answer promptly; a lock held longer than this means something is stuck, and the
# hook then goes on without the state rather than hang the agent.
LOCK_WAIT_SECONDS = 3.0
_UNSAFE = r"[^A-Za-z0-9_.-]"
# The state a write moved aside: the state itself until the new one has its name.
PREVIOUS = ".prev"
READ_ATTEMPTS = 2
JOURNAL = ".events"
# The state's key for how many bytes of the journal it holds already.
FOLDED = "folded"


class StateBusy(Exception):
    """The session's state stayed locked for LOCK_WAIT_SECONDS."""


def state_dir(data_dir: str) -> str:
    return os.path.join(str(data_dir), "hooks", "sessions")


def state_path(data_dir: str, session_id: str) -> str:
    """A file name that is safe whatever the id holds, and still recognisable."""
    from capy.packregex import pack_regex

    readable = pack_regex(_UNSAFE).sub("_", session_id)[:48]
    return os.path.join(
        state_dir(data_dir), f"{readable}-{zlib.crc32(session_id.encode()):08x}.json"
    )


def read_state(data_dir: str, session_id: str, *, events: bool = True) -> dict[str, Any]:
    """The state without taking the lock (a state file is only ever renamed in whole), with
    the events appended since it was written unless `events` is False (a reader of the other
    keys spares itself the journal)."""
    path = state_path(data_dir, session_id)
    state = _load(path)
    if events:
        _replay(state, path)
    return state


def append_event(data_dir: str, session_id: str, entry: dict[str, Any]) -> None:
    """Add one event (`category`, `text`, `at`, `keep`: see `apply_event`) to the session's
    journal; it joins the state when the state is next read."""
    path = state_path(data_dir, session_id)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    line = dumps(entry, ensure_ascii=False).encode() + b"\n"
    descriptor = os.open(path + JOURNAL, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(descriptor, line)
    finally:
        os.close(descriptor)


def apply_event(state: dict[str, Any], category: str, text: str, at: float, keep: int) -> None:
    """Append one event; the same text again moves to the end instead of repeating; at most
    `keep` per category."""
    events = state.setdefault("events", {}).setdefault(category, [])
    events[:] = [item for item in events if item.get("text") != text]
    events.append({"at": at, "text": text})
    del events[:-keep]
    state["event_count"] = int(state.get("event_count", 0)) + 1


class session_state:
    """Lock, read, hand out the state for changes, and write it back if it changed.

    A class rather than `contextlib.contextmanager`: one import less on every tool call.
    """

    def __init__(self, data_dir: str, session_id: str):
        self.path = state_path(data_dir, session_id)
        self._descriptor = -1
        self._state: dict[str, Any] = {}
        self._before = ""

    def __enter__(self) -> dict[str, Any]:
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        self._descriptor = os.open(
            self.path[: -len(".json")] + ".lock", os.O_RDWR | os.O_CREAT, 0o600
        )
        try:
            _lock(self._descriptor)
        except BaseException:
            os.close(self._descriptor)
            raise
        self._state = _load(self.path)
        self._before = dumps(self._state, sort_keys=True)
        _replay(self._state, self.path)  # written back below, with the new offset
        return self._state

    def __exit__(self, error_type: object, error: object, traceback: object) -> None:
        try:
            if error_type is None and dumps(self._state, sort_keys=True) != self._before:
                _write_beside(self.path, dumps(self._state, ensure_ascii=False).encode())
        finally:
            os.close(self._descriptor)  # closing the descriptor releases the lock


def forget_session(data_dir: str, session_id: str) -> None:
    """Remove a finished session's state and lock files (its events are in the knowledge base)."""
    from capy.atomicfile import unlink_quietly

    path = state_path(data_dir, session_id)
    unlink_quietly(path)
    unlink_quietly(path + PREVIOUS)
    unlink_quietly(path + JOURNAL)
    unlink_quietly(path[: -len(".json")] + ".lock")


def _write_beside(path: str, content: bytes) -> None:
    """Give `path` new content without renaming over a file (see the module's note); the
    caller holds the state's lock."""
    from capy.atomicfile import unlink_quietly, written_temporary

    temporary = written_temporary(path, content)
    try:
        unlink_quietly(path + PREVIOUS)
        _step_aside(path)
        os.rename(temporary, path)
    except BaseException:
        unlink_quietly(temporary)
        raise


def _step_aside(path: str) -> None:
    try:
        os.rename(path, path + PREVIOUS)
    except FileNotFoundError:
        return  # the session's first state


def _lock(descriptor: int) -> None:
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise StateBusy("the session state stayed locked") from None
            time.sleep(0.005)


def _replay(state: dict[str, Any], path: str) -> None:
    """Apply the journal's whole lines past `state[FOLDED]`; a line that does not parse (a
    crash cut it) is passed over."""
    start = state.get(FOLDED, 0)
    try:
        with open(path + JOURNAL, "rb") as stream:
            stream.seek(start if isinstance(start, int) else 0)
            data = stream.read()
    except OSError:
        return
    end = data.rfind(b"\n") + 1
    for line in data[:end].splitlines():
        try:
            entry = loads(line)
            apply_event(state, entry["category"], entry["text"], entry["at"], entry["keep"])
        except (ValueError, KeyError, TypeError):
            continue
    if end:
        state[FOLDED] = (start if isinstance(start, int) else 0) + end


def _load(path: str) -> dict[str, Any]:
    """The stored state, or the one that stepped aside while a writer renames (tried in turn,
    twice over, as a writer may finish and the next one start meanwhile); a missing or damaged
    file starts afresh (it only holds hints)."""
    for candidate in (path, path + PREVIOUS) * READ_ATTEMPTS:
        try:
            with open(candidate, "rb") as stream:
                state = loads(stream.read())
        except (OSError, ValueError):
            continue  # missing (mid-rename), or cut short: the one beside it
        return state if isinstance(state, dict) else {}
    return {}
