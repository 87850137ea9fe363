"""A finished session's events reach the knowledge base in the background, and survive a stop.

Saving them in the SessionEnd hook cost the agent 0.3-1.7 s, nearly all of it the store's
imports and its open. So the hook only writes a record of the ended session (its id, project
and state) beside the session states, flushed to disk (`fsync` of the file and its folder)
before the state itself is dropped, and starts the detached drainer, which saves every record
it finds once the hook has exited and removes each record only after the store has committed it.

What that keeps:
- nothing is lost if the machine stops: a record is on disk before the hook answers, and stays
  until a drainer has saved it; any later drainer (the next SessionEnd or PreCompact, a spool
  past its size, `python -m capy.capsules.drain`) saves what an earlier one could not;
- the hook never breaks the agent: it writes one small file; should that fail, it saves the
  session itself as before; should the drainer not start, it saves the records itself;
- two drainers never save one record twice: each takes the record's `flock` and skips a record
  another holds or has removed.

A session resumed after its end starts a fresh state; its next end writes a second record
(names carry the time), saved after the first.
"""

from __future__ import annotations

import os
import time

from capy.hooks.state import forget_session, state_dir, state_path
from capy.leanjson import dumps, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

ENDED = ".ended"


def hand_over(data_dir: str, project_root: str, session_id: str, state: dict[str, Any]) -> bool:
    """Write the ended session's record durably and drop its state; False when there was
    nothing to save (no events). An OSError means no record was written: the state is kept."""
    if not state.get("events"):
        forget_session(data_dir, session_id)
        return False
    stem = state_path(data_dir, session_id)[: -len(".json")]
    path = f"{stem}.{time.time_ns()}{ENDED}"
    record = {"session_id": session_id, "project_root": project_root, "state": state}
    _write_durably(path, dumps(record, ensure_ascii=False).encode())
    forget_session(data_dir, session_id)
    return True


def save_ended_sessions(data_dir: str, save: Callable[..., str | None] | None = None) -> int:
    """Save every ended session's record under `data_dir` to its project's knowledge base,
    oldest first, and remove the ones saved; how many were saved. `save` is
    `capy.hooks.knowledge.persist_session` unless given."""
    import fcntl

    if save is None:
        from capy.hooks.knowledge import persist_session as save
    folder = state_dir(data_dir)
    try:
        names = sorted(name for name in os.listdir(folder) if name.endswith(ENDED))
    except OSError:
        return 0
    saved = 0
    for name in names:
        path = os.path.join(folder, name)
        try:
            descriptor = os.open(path, os.O_RDONLY)
        except OSError:
            continue  # another drainer saved it meanwhile
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.fstat(descriptor).st_nlink == 0:
                continue  # saved and removed while this one waited to open it
            record = loads(_read_all(descriptor))
            from pathlib import Path

            problem = save(Path(record["project_root"]), record["session_id"], record["state"])
            if problem is None:
                os.unlink(path)
                saved += 1
        except (OSError, ValueError, KeyError, TypeError):
            continue  # held by another drainer, or unreadable: left for a later one
        finally:
            os.close(descriptor)
    return saved


def _write_durably(path: str, content: bytes) -> None:
    temporary = f"{path}.{os.getpid()}.tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        try:
            view = memoryview(content)
            while view:
                view = view[os.write(descriptor, view) :]
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
        os.rename(temporary, path)
    except BaseException:
        from contextlib import suppress  # only on this rare path: a hook pays for imports

        with suppress(OSError):
            os.unlink(temporary)
        raise
    folder = os.open(os.path.dirname(path), os.O_RDONLY)
    try:
        os.fsync(folder)  # the record's name, not only its data, survives a stop
    finally:
        os.close(folder)


def _read_all(descriptor: int) -> bytes:
    chunks = []
    while chunk := os.read(descriptor, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)
