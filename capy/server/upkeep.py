"""The server's upkeep: background work started once the client has its tools, and the WAL
checkpointed on a schedule, since its kept-open connections never close.

Background work (the capture spool drained once, trigram blocks an earlier server left
unwritten, the capsule pipeline's thread, the semantic embedder's thread) starts after the
first `tools/list` answer, or `BACKGROUND_AT_LATEST_S` after start for a client that never
lists tools: its imports and its first reads would
otherwise share the interpreter with answering `initialize` and `tools/list`, the time an agent
waits before it can call a tool (several hundred milliseconds of a start on a loaded 2-core
machine). A client that leaves before then starts none of it.

SQLite checkpoints by itself as commits grow the WAL (every 1,000 pages), and the last
connection to close checkpoints the rest; a server that keeps its connections open for hours
would leave that rest to its exit. A PASSIVE checkpoint never waits for a reader or a writer
(hooks and the CLI write from other processes), so at worst it copies less; the exit runs the
full checkpoint that truncates the WAL.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

if TYPE_CHECKING:
    from capy.api.workspace import Workspace

logger = logging.getLogger("capy.server")

# Often enough that a crash leaves little to replay, rarely enough to cost nothing.
CHECKPOINT_INTERVAL_S = 60.0
# After the tool list went out, so its answer is written before the background imports begin.
BACKGROUND_AFTER_LIST_S = 0.5
BACKGROUND_AT_LATEST_S = 5.0
_LISTED_POLL_S = 0.05
# glibc gives threads their own heaps ("arenas", up to 8 per core): the server's worker threads,
# the stdio transport's and the embedder's each leave freed memory behind in their own. With
# two, the server's peak resident set with the embedder working (`capy bench peer --pause 40`,
# 8 files) was 305 MB instead of 345 MB.
HEAP_ARENAS = 2
# Blocks at least this large are mapped on their own and unmapped when freed. glibc's default
# threshold grows with every large block freed, after which an ONNX run's buffers come from the
# heap and stay: a bare process embedding 120 pieces, 4 a batch, ended at 213 MB resident with
# the default and at 163 MB with 128 KiB (the model loaded is 161 MB), no slower. Setting it
# also stops the growth.
MMAP_THRESHOLD_BYTES = 128 * 1024
_M_ARENA_MAX = -8  # mallopt's parameter numbers (malloc.h)
_M_MMAP_THRESHOLD = -3


def tune_heap(arenas: int = HEAP_ARENAS, mmap_threshold: int = MMAP_THRESHOLD_BYTES) -> None:
    """Ask glibc for at most `arenas` heaps and a fixed mmap threshold; before the server starts
    its threads, since heaps already made stay. Elsewhere (another C library, no ctypes)
    nothing changes. A user's MALLOC_ARENA_MAX or MALLOC_MMAP_THRESHOLD_, read by glibc itself,
    is left to rule."""
    import os

    try:
        import ctypes

        process = ctypes.CDLL(None)  # the C library's symbols, without ctypes.util's search
        if not hasattr(process, "mallopt"):
            return
        if not os.environ.get("MALLOC_ARENA_MAX"):
            process.mallopt(_M_ARENA_MAX, arenas)
        if not os.environ.get("MALLOC_MMAP_THRESHOLD_"):
            process.mallopt(_M_MMAP_THRESHOLD, mmap_threshold)
    except (OSError, ImportError, AttributeError, TypeError):
        return


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


class BackgroundWork:
    """The server's background threads: started at most once, stopped at exit."""

    def __init__(
        self, workspace: Workspace, db_path: Path | None, *, tools: Callable[[], None]
    ) -> None:
        self._workspace = workspace
        self._add_tools = tools
        self._db_path = db_path
        self._lock = threading.Lock()
        self._stopped = False
        self._threads: list[Any] = []  # each has stop()

    async def start_when_listed(self, listed: Callable[[], bool]) -> None:
        """Wait until `listed()` is true (the tool list was answered) or the latest start;
        then build the tools (a list answered from its file left them to build), and start
        the rest a moment later, each on a worker thread."""
        waited = 0.0
        while not listed() and waited < BACKGROUND_AT_LATEST_S:
            await anyio.sleep(_LISTED_POLL_S)
            waited += _LISTED_POLL_S
        await anyio.to_thread.run_sync(self._add_tools)
        await anyio.sleep(BACKGROUND_AFTER_LIST_S)
        await anyio.to_thread.run_sync(self.start)

    def start(self) -> None:
        from capy.capsules.pipeline.background import start_background_pipeline

        _drain_capture_spool(self._workspace)
        catch_up = self._workspace.trigram_catch_up
        if catch_up is not None:  # blocks an earlier server left unwritten at its exit
            catch_up.poke()
        project_dir = self._workspace.project_dir
        for begin in (
            lambda: start_background_pipeline(project_dir),
            lambda: _start_embedder(project_dir, self._db_path),
        ):
            with self._lock:
                if self._stopped:
                    return
                started = begin()
                if started is not None:
                    self._threads.append(started)

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            threads, self._threads = self._threads, []
        for thread in threads:
            try:
                thread.stop()
            except Exception:  # the next one must still stop
                logger.warning("stopping a background thread failed", exc_info=True)


def _drain_capture_spool(workspace: Workspace) -> None:
    """Move what hooks spooled into the capsule log."""
    from capy.capsules.spool import drain_for_project

    try:
        drain_for_project(workspace.project_dir, workspace.rules)
    except Exception:  # broken packs are the tools' to report; the spool waits
        logger.debug("the capture spool was not drained", exc_info=True)


def _start_embedder(project_dir: Path, db_path: Path | None):  # type: ignore[no-untyped-def]
    """The semantic layer's background embedder, when its extra and model are installed (its
    own connection; never on a tool call's path). None otherwise, or when it cannot start."""
    from capy.semantic import extra_installed

    if not extra_installed():
        return None
    try:
        from capy.rules import load_rules
        from capy.semantic.service import start_background_embedder
        from capy.store import open_store

        return start_background_embedder(
            lambda: open_store(project_dir, db_path=db_path), load_rules(project_dir)
        )
    except Exception:  # the server runs without vectors rather than not at all
        logger.warning("the background embedder did not start", exc_info=True)
        return None
