"""A session's events reach the knowledge base in the background, and survive a stop.

Saving them in the SessionEnd hook cost the agent 0.3-1.7 s, nearly all of it the store's
imports and its open; PreCompact paid the same while the agent waited for its compaction. So
these hooks only write a record of the session (its id, project, state and, at a compaction,
the snapshot) beside the session states, flushed to disk (`fsync` of the file and its folder)
before the hook answers (SessionEnd then drops the state itself), and start the detached
drainer, which saves every record it finds once the hook has exited and removes each record
only after the store has committed it.

What that keeps:
- nothing is lost if the machine stops: a record is on disk before the hook answers, and stays
  until a drainer has saved it; any later drainer (the next SessionEnd or PreCompact, a spool
  past its size, `python -m capy.capsules.drain`) saves what an earlier one could not;
- the hook never breaks the agent: it writes one small file; should that fail, it saves the
  session itself as before; should the drainer not start, it saves the records itself;
- two drainers never save one record twice: each takes the record's `flock` and skips a record
  another holds or has removed;
- records are saved in the order they were written (names carry the time): a compaction's
  before the session's end, a resumed session's second end after its first.
"""

from __future__ import annotations

import os
import time

from capy.atomicfile import write_atomically
from capy.hooks.state import forget_session, state_dir, state_path
from capy.leanjson import dumps, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from capy.hooks.context import HookContext

ENDED = ".ended"  # a session's end: its state is dropped once the record is written
COMPACTED = ".compacted"  # a compaction: the session goes on with its state
RECORDS = (ENDED, COMPACTED)


def hand_over(
    data_dir: str,
    project_root: str,
    session_id: str,
    state: dict[str, Any],
    snapshot: str | None = None,
) -> bool:
    """Write the session's record durably: at its end (no `snapshot`) the state is dropped
    then, at a compaction it stays. False when there was nothing to save (no events). An
    OSError means no record was written, and the state is kept."""
    ended = snapshot is None
    if not state.get("events"):
        if ended:
            forget_session(data_dir, session_id)
        return False
    stem = state_path(data_dir, session_id)[: -len(".json")]
    path = f"{stem}.{time.time_ns()}{ENDED if ended else COMPACTED}"
    record = {"session_id": session_id, "project_root": project_root, "state": state}
    if snapshot:
        record["snapshot"] = snapshot
    # ASCII: a lone surrogate cannot break it
    write_atomically(path, dumps(record).encode(), durable=True)
    if ended:
        forget_session(data_dir, session_id)
    return True


def save_session_records(data_dir: str) -> int:
    """Save every session record under `data_dir` to its project's knowledge base, oldest
    first, and remove the ones saved; how many were saved."""
    import fcntl

    from capy.hooks.knowledge import persist_session

    folder = state_dir(data_dir)
    try:
        names = sorted(name for name in os.listdir(folder) if name.endswith(RECORDS))
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

            root, session = Path(record["project_root"]), record["session_id"]
            problem = persist_session(root, session, record["state"], record.get("snapshot"))
            if problem is None:
                os.unlink(path)
                saved += 1
        except (OSError, ValueError, KeyError, TypeError):
            continue  # held by another drainer, or unreadable: left for a later one
        finally:
            os.close(descriptor)
    return saved


def _read_all(descriptor: int) -> bytes:
    chunks = []
    while chunk := os.read(descriptor, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def save_in_background(
    context: HookContext, state: dict[str, Any], snapshot: str | None = None
) -> None:
    """What SessionEnd (no `snapshot`) and PreCompact do with the session: its record, then
    the drainer (the capture drainer saves records too; with capture off, or a drainer of
    another process already past them, a sessions-only one does). A drainer a hook process
    starts waits for that process to exit before it does anything."""
    from capy.hooks.capture import drain_if_due, start_context_drainer

    root, session = context.rules["project_root"], context.hook.session_id
    try:
        handed = hand_over(context.data_dir, root, session, state, snapshot)
    except (OSError, ValueError):
        _save_here(context, state, snapshot)  # no record: saved here, as hooks always did
        handed = False
    drain_if_due(context)
    if handed:
        try:
            start_context_drainer(context, sessions_only=True)
        except OSError:
            save_session_records(context.data_dir)


def _save_here(context: HookContext, state: dict[str, Any], snapshot: str | None) -> None:
    """The session saved in this process; at its end the state is dropped once saved and
    otherwise kept, so the next PreCompact or SessionEnd retries."""
    from capy.hooks.knowledge import persist_session

    session = context.hook.session_id
    problem = persist_session(context.project_root, session, state, snapshot)
    if problem:
        context.note(problem)
    elif snapshot is None:
        forget_session(context.data_dir, session)
