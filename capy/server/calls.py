"""How a tool call runs: on a worker thread, recorded in the session stats, never crashing.

The library API is synchronous (SQLite, subprocesses); running it on a worker thread keeps the
event loop free for other requests, pings and cancellations. A cancelled call (the client's
`notifications/cancelled`) returns at once and sets the call's cancellation event, which kills
whatever the work runs in the sandbox. Every failure becomes an MCP tool error with one clear
sentence; the connection is never dropped. Every reply, text and structured content alike,
leaves through `capy.api.outbound` (secrets redacted, terminal controls shown).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from mcp.types import CallToolResult, TextContent

from capy.api.reply import ToolInputError, ToolReply
from capy.server.collector import freeze_after_first_call

if TYPE_CHECKING:
    from capy.api.workspace import Workspace

logger = logging.getLogger("capy.server")

# A tool call's work is mostly waiting (subprocesses, network, SQLite locks): more threads than
# cores is right, and the executor pack's batch limit bounds what one call starts on its own.
WORKER_THREADS = 16
# How often a long single run reports progress to a client that asked for it.
PROGRESS_INTERVAL_S = 1.0
_limiter: anyio.CapacityLimiter | None = None


def _threads() -> anyio.CapacityLimiter:
    global _limiter
    if _limiter is None:
        _limiter = anyio.CapacityLimiter(WORKER_THREADS)
    return _limiter


async def run_tool(
    workspace: Workspace, name: str, work: str | Callable[..., ToolReply], /, **arguments: Any
) -> CallToolResult:
    """Run `work(workspace, **arguments)` off the event loop and turn its reply into a result.

    `work` may be a "module:function" path, imported on first use (inside the guard, so even a
    broken import is a tool error, not a crash).
    """
    from capy.executor.cancel import cancellable
    from capy.foreground import foreground_call

    cancel = threading.Event()
    with foreground_call():  # background work in this process waits for it
        try:
            function = _resolve(work) if isinstance(work, str) else work
            with cancellable(cancel):  # the worker thread inherits this context
                # The reply is redacted on the same worker thread: each hop between the event
                # loop and a worker costs a thread wake-up, several on a busy machine.
                reply = await anyio.to_thread.run_sync(
                    functools.partial(_work_then_outbound, function, workspace, arguments),
                    limiter=_threads(),
                    abandon_on_cancel=True,
                )
        except anyio.get_cancelled_exc_class():
            cancel.set()  # the abandoned thread's sandboxed processes die now, not at the end
            raise
        except Exception as error:  # every failure must reach the agent as text
            failed = ToolReply(explain_error(name, error), is_error=True)
            reply = await anyio.to_thread.run_sync(_outbound, workspace, failed, limiter=_threads())
    workspace.stats.record(name, reply)
    freeze_after_first_call(name)
    content = [TextContent(type="text", text=reply.text)]
    return CallToolResult(content=content, structured_content=reply.data, is_error=reply.is_error)


def _work_then_outbound(
    function: Callable[..., ToolReply], workspace: Workspace, arguments: dict[str, Any]
) -> ToolReply:
    return _outbound(workspace, function(workspace, **arguments))


def _outbound(workspace: Workspace, reply: ToolReply) -> ToolReply:
    """The reply redacted and made safe to display; if that fails, nothing of it leaves."""
    from capy.api.outbound import outbound_reply

    try:
        return outbound_reply(workspace, reply)
    except Exception as error:
        logger.exception("redacting a reply failed")
        text = (
            f"capy could not check this reply for secrets ({type(error).__name__}), so it is "
            "withheld. Run `capy rules validate` in the project; the server's log has details."
        )
        return ToolReply(text, processed_bytes=reply.processed_bytes, is_error=True)


def _resolve(target: str) -> Callable[..., ToolReply]:
    import importlib

    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def explain_error(name: str, error: Exception) -> str:
    """One sentence for the agent; a traceback only in the server's log, for the unforeseen."""
    from capy.config import ConfigError
    from capy.executor import ExecutorError
    from capy.rules import RulesError
    from capy.store import StoreError

    if isinstance(error, ToolInputError | ExecutorError):
        return str(error)
    if isinstance(error, StoreError):
        return f"The knowledge base could not be used: {error.message}"
    from capy.store.failures import explain_failure

    explained = explain_failure(error, None)
    if explained is not None:
        return f"The knowledge base could not be used: {explained.message}"
    if isinstance(error, ConfigError):
        return "capy's configuration is invalid: " + "; ".join(error.lines)
    if isinstance(error, RulesError):
        return (
            "The rule packs in force have errors; run `capy rules validate` in the project "
            "to see them, then fix or remove the overlay."
        )
    logger.exception("%s failed unexpectedly", name)
    return (
        f"{name} failed unexpectedly ({type(error).__name__}: {error}). The server's log has "
        "the details; the server keeps running."
    )


async def run_tool_reporting_output(
    report: Callable[..., Awaitable[Any]],
    workspace: Workspace,
    name: str,
    work: str | Callable[..., ToolReply],
    /,
    **arguments: Any,
) -> CallToolResult:
    """`run_tool` for one long run: every PROGRESS_INTERVAL_S while it runs, `report` (the
    call's `report_progress`, a no-op without the client's progress token) gets the seconds
    elapsed as progress, with the output seen so far in its message. There is no total: how
    long a program runs is not known before it ends."""
    from capy.executor.meter import OutputMeter, metered
    from capy.units import human_bytes

    meter = OutputMeter()

    async def tick() -> None:
        while True:
            await anyio.sleep(PROGRESS_INTERVAL_S)
            elapsed = meter.elapsed_s
            message = f"running for {elapsed:.0f} s, {human_bytes(meter.bytes_seen)} of output"
            try:
                await report(round(elapsed, 1), None, message)
            except Exception:  # progress is a courtesy; losing one must not fail the work
                logger.debug("a progress notification could not be sent", exc_info=True)

    async with anyio.create_task_group() as group:
        group.start_soon(tick)
        with metered(meter):  # the worker thread, and the run's output pump, inherit it
            result = await run_tool(workspace, name, work, **arguments)
        group.cancel_scope.cancel()
    return result


def progress_reporter(report: Callable[..., Any]) -> Callable[[int, int], None]:
    """A sync (done, total) callback that sends MCP progress notifications from any thread.

    Made on the event loop, it keeps that loop's token, so threads the work starts itself (a
    batch's pool) can report too. Without a progress token from the client, `report` is a no-op.
    """
    token = anyio.lowlevel.current_token()

    def advance(done: int, total: int) -> None:
        try:
            anyio.from_thread.run(report, done, total, token=token)
        except Exception:  # progress is a courtesy; losing one must not fail the work
            logger.debug("a progress notification could not be sent", exc_info=True)

    return advance
