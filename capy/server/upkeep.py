"""The server's upkeep: the capture spool drained at start, and the WAL checkpointed on a
schedule, since its kept-open connections never close.

SQLite checkpoints by itself as commits grow the WAL (every 1,000 pages), and the last
connection to close checkpoints the rest; a server that keeps its connections open for hours
would leave that rest to its exit. A PASSIVE checkpoint never waits for a reader or a writer
(hooks and the CLI write from other processes), so at worst it copies less; the exit runs the
full checkpoint that truncates the WAL.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import anyio
import anyio.to_thread

if TYPE_CHECKING:
    from capy.api.workspace import Workspace

logger = logging.getLogger("capy.server")

# Often enough that a crash leaves little to replay, rarely enough to cost nothing.
CHECKPOINT_INTERVAL_S = 60.0


async def checkpoint_periodically(workspace: Workspace) -> None:
    while True:
        await anyio.sleep(CHECKPOINT_INTERVAL_S)
        await anyio.to_thread.run_sync(passive_checkpoint, workspace)


def passive_checkpoint(workspace: Workspace) -> None:
    """Copy what the WAL holds into the database, unless nothing was written; never raising."""
    try:
        with workspace.store() as store:
            wal = store.path.with_name(store.path.name + "-wal")
            if wal.exists() and wal.stat().st_size:
                store.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    except Exception:  # a missing or locked store waits for the next round
        logger.debug("a scheduled checkpoint was skipped", exc_info=True)


async def drain_capture_spool(workspace: Workspace) -> None:
    """Once at start: move what hooks spooled into the capsule log, off the event loop."""
    await anyio.to_thread.run_sync(_drain_capture_spool, workspace)


def _drain_capture_spool(workspace: Workspace) -> None:
    from capy.capsules.spool import drain_for_project

    try:
        drain_for_project(workspace.project_dir, workspace.rules)
    except Exception:  # broken packs are the tools' to report; the spool waits
        logger.debug("the capture spool was not drained", exc_info=True)
