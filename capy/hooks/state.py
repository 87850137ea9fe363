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

Paths are plain strings and temp names are made by hand: `pathlib` and `tempfile` would cost
more to import than the whole state update.
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


def read_state(data_dir: str, session_id: str) -> dict[str, Any]:
    """The state without taking the lock (a state file is only ever renamed in whole)."""
    return _load(state_path(data_dir, session_id))


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
        return self._state

    def __exit__(self, error_type: object, error: object, traceback: object) -> None:
        try:
            if error_type is None and dumps(self._state, sort_keys=True) != self._before:
                _write_beside(self.path, dumps(self._state, ensure_ascii=False).encode())
        finally:
            os.close(self._descriptor)  # closing the descriptor releases the lock


def forget_session(data_dir: str, session_id: str) -> None:
    """Remove a finished session's state and lock files (its events are in the knowledge base)."""
    path = state_path(data_dir, session_id)
    _unlink_quietly(path)
    _unlink_quietly(path + PREVIOUS)
    _unlink_quietly(path[: -len(".json")] + ".lock")


def write_atomically(path: str, content: bytes) -> None:
    """Write to a private temp file beside `path`, then rename it over `path`."""
    temporary = _written_temporary(path, content)
    try:
        os.replace(temporary, path)
    except BaseException:
        _unlink_quietly(temporary)
        raise


def _write_beside(path: str, content: bytes) -> None:
    """Give `path` new content without renaming over a file (see the module's note); the
    caller holds the state's lock."""
    temporary = _written_temporary(path, content)
    try:
        _unlink_quietly(path + PREVIOUS)
        _step_aside(path)
        os.rename(temporary, path)
    except BaseException:
        _unlink_quietly(temporary)
        raise


def _step_aside(path: str) -> None:
    try:
        os.rename(path, path + PREVIOUS)
    except FileNotFoundError:
        return  # the session's first state


def _written_temporary(path: str, content: bytes) -> str:
    temporary = f"{path}.{os.getpid()}.{time.monotonic_ns()}.tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(content)
    except BaseException:
        _unlink_quietly(temporary)
        raise
    return temporary


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        return


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
