"""Build and run the MCP server: one Workspace for its life, clean exit however it ends.

The server ends when stdin closes (the client went away), when its parent process dies (an
agent killed without closing the pipe) or on SIGTERM or SIGHUP; each way it kills every
sandboxed call still running, terminates the background jobs it started, checkpoints the
knowledge base's WAL and closes the connections it kept open, so nothing is left running or
half-written. While it runs, the WAL is checkpointed on a schedule and, once the client has its
tool list, the capsule pipeline and the semantic embedder work in background threads
(capy.server.upkeep).
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from capy import __version__

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from capy.api.workspace import Workspace
    from capy.server.mcp_server import CapyServer

logger = logging.getLogger("capy.server")

INSTRUCTIONS = (
    "capy keeps raw data out of your context. Run commands whose output may be long with "
    "capy_execute (with an intent) or capy_batch_execute, process big files with "
    "capy_execute_file, fetch documentation with capy_fetch_and_index, and find anything capy "
    "indexed with capy_search, batching your questions into one call."
)
# How often the server checks that the process that started it is still alive.
PARENT_POLL_S = 2.0


def build_server(workspace: Workspace, *, mcp_hooks: bool = False) -> CapyServer:
    from capy.server.catalog import register_catalog
    from capy.server.mcp_server import CapyServer

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[None]:
        try:
            yield None
        finally:
            await anyio.to_thread.run_sync(shutdown, workspace)

    def add_tools() -> None:
        from capy.api.knowledge import SearchThrottle
        from capy.server.tools import register_tools

        register_tools(server, workspace, SearchThrottle(), mcp_hooks=mcp_hooks)

    server = CapyServer(
        workspace,
        add_tools=add_tools,
        mcp_hooks=mcp_hooks,
        name="capy",
        title="capy",
        version=__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        log_level="WARNING",
    )
    register_catalog(server, workspace)
    return server


def shutdown(workspace: Workspace) -> None:
    """End running calls and background jobs, checkpoint the WAL; each step never raising."""
    from capy.executor import prejoin, shutdown_background
    from capy.executor.processes import terminate_all

    try:
        prejoin.stop()
    except Exception:  # the next step must still run
        logger.warning("ending the ready spawner failed", exc_info=True)
    try:
        shutdown_background()
    except Exception:  # the next step must still run
        logger.warning("stopping background jobs failed", exc_info=True)
    try:
        terminate_all()
    except Exception:  # the next step must still run
        logger.warning("ending running calls failed", exc_info=True)
    catch_up = workspace.trigram_catch_up
    if catch_up is not None:  # before the checkpoint, which then copies its writes too
        catch_up.stop()
    try:
        from capy.store.maintenance import checkpoint

        with workspace.store() as store:
            checkpoint(store.conn)
    except Exception:  # a missing or locked store is not worth a crash at exit
        logger.debug("the exit checkpoint was skipped", exc_info=True)
    workspace.close_store()  # after the checkpoint, which reuses one of its connections
    if "stats" in workspace.__dict__:  # only a session that recorded calls has any to save
        workspace.stats.flush()


async def serve_stdio(
    project_dir: Path | None = None, db_path: Path | None = None, mcp_hooks: bool = False
) -> None:
    from capy.api.workspace import Workspace
    from capy.executor.prejoin import keep_ready
    from capy.server.trigram_upkeep import TrigramCatchUp
    from capy.server.upkeep import BackgroundWork, checkpoint_periodically, tune_heap

    tune_heap()  # before the first worker thread
    workspace = Workspace(project_dir, db_path=db_path, keep_store_open=True)
    workspace.trigram_catch_up = TrigramCatchUp(workspace)
    server = build_server(workspace, mcp_hooks=mcp_hooks)
    keep_ready()  # each sandboxed call's first process has entered its cgroups ahead of time
    background = BackgroundWork(workspace, db_path, tools=server.add_capy_tools)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(_watch_parent, workspace, os.getppid())
            group.start_soon(_watch_signals, workspace)
            group.start_soon(checkpoint_periodically, workspace)
            group.start_soon(background.start_when_listed, lambda: server.tools_listed)
            await server.run_stdio_async()
            group.cancel_scope.cancel()
    finally:
        await anyio.to_thread.run_sync(background.stop)


async def _watch_signals(workspace: Workspace) -> None:
    """SIGTERM or SIGHUP (a client stopping the server, a closed terminal): clean up, leave.

    Their default action ends the process without running any cleanup, which would leave the
    running calls' processes behind.
    """
    wanted = [signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]
    try:
        receiver = anyio.open_signal_receiver(*wanted)
        with receiver as signals:
            async for signum in signals:
                logger.warning("received signal %d; stopping the server", signum)
                await anyio.to_thread.run_sync(shutdown, workspace)
                os._exit(0)
    except NotImplementedError:  # Windows event loops take no signal handlers
        return


async def _watch_parent(workspace: Workspace, parent: int) -> None:
    """End the server when the process that started it is gone (re-parented elsewhere).

    The stdio reader sits in a blocking read on a pipe nobody will close, which cancellation
    cannot interrupt; so clean up here, then leave at once.
    """
    while True:
        await anyio.sleep(PARENT_POLL_S)
        if os.getppid() != parent:
            logger.warning("the parent process %d exited; stopping the server", parent)
            await anyio.to_thread.run_sync(shutdown, workspace)
            os._exit(0)
