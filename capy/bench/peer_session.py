"""One measured session of an MCP server over stdio, driven by the official SDK client.

The same steps for capy and for the peer, each on a fresh project and home: spawn the server
and wait for tools/list (start), index every corpus file with the server's own index tool, one
call per file (throughput), search each query in its own call, run `echo hi` several times,
and sample the resident memory of the server's process tree throughout.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from capy.bench.peer_corpus import CorpusFile

# Often enough to catch an index call's peak, rare enough to cost the two cores little.
SAMPLE_INTERVAL_S = 0.05
READ_TIMEOUT_S = 300


@dataclass(frozen=True)
class ToolShapes:
    """How one server names its tools and what arguments an agent gives them."""

    index: str
    search: str
    execute: str

    def index_arguments(self, item: CorpusFile) -> dict:
        return {"path": str(item.path), "source": item.label}

    def search_arguments(self, query: str) -> dict:
        return {"queries": [query]}

    def execute_arguments(self) -> dict:
        return {"language": "shell", "code": "echo hi"}


@dataclass
class SessionFigures:
    start_ms: float = 0.0
    index_s: float = 0.0
    index_bytes: int = 0
    index_ms: list[float] = field(default_factory=list)  # per file, in corpus order
    search_ms: list[float] = field(default_factory=list)
    execute_ms: list[float] = field(default_factory=list)
    peak_rss_bytes: int = 0
    tools: list[str] = field(default_factory=list)


class ServerFailed(Exception):
    """A tool call failed or answered with an error; the message names the call."""


def run_session(
    command: list[str],
    environ: dict[str, str],
    cwd: Path,
    shapes: ToolShapes,
    corpus: list[CorpusFile],
    queries: list[str],
    executes: int,
    log: Path,
    pause_s: float = 0.0,
) -> SessionFigures:
    """`pause_s` > 0: after the timed calls, that long without a call (background work's
    turn: capy's embedder starts only then) and the queries once more, untimed; the memory
    sampled throughout is the peak reported."""
    import anyio

    try:
        return anyio.run(
            _session, command, environ, cwd, shapes, corpus, queries, executes, log, pause_s
        )
    except BaseExceptionGroup as group:  # the SDK's task groups wrap what the session raised
        failed = group.subgroup(ServerFailed)
        if failed is None:
            raise
        raise _first(failed) from None


def _first(group: BaseExceptionGroup) -> BaseException:
    while isinstance(group, BaseExceptionGroup):
        group = group.exceptions[0]
    return group


async def _session(command, environ, cwd, shapes, corpus, queries, executes, log, pause_s):
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(cwd), env=environ)
    figures = SessionFigures()
    sampler = TreeMemorySampler(os.getpid())
    with log.open("w", encoding="utf-8") as errlog:
        sampler.start()
        started = time.perf_counter()
        try:
            transport = stdio_client(params, errlog=errlog)
            async with Client(transport, read_timeout_seconds=READ_TIMEOUT_S) as client:
                listed = await client.list_tools()
                figures.start_ms = (time.perf_counter() - started) * 1000
                figures.tools = sorted(tool.name for tool in listed.tools)
                await _index(client, shapes, corpus, figures)
                for query in queries:
                    figures.search_ms.append(
                        await _timed_call(client, shapes.search, shapes.search_arguments(query))
                    )
                for _ in range(executes):
                    figures.execute_ms.append(
                        await _timed_call(
                            client, shapes.execute, shapes.execute_arguments(), expect="hi"
                        )
                    )
                if pause_s > 0:
                    await anyio.sleep(pause_s)
                    for query in queries:
                        await _timed_call(client, shapes.search, shapes.search_arguments(query))
        finally:
            figures.peak_rss_bytes = sampler.stop()
    return figures


async def _index(client, shapes: ToolShapes, corpus: list[CorpusFile], figures) -> None:
    started = time.perf_counter()
    for item in corpus:
        figures.index_ms.append(
            await _timed_call(client, shapes.index, shapes.index_arguments(item))
        )
        figures.index_bytes += item.size
    figures.index_s = time.perf_counter() - started


async def _timed_call(client, tool: str, arguments: dict, expect: str | None = None) -> float:
    started = time.perf_counter()
    result = await client.call_tool(tool, arguments)
    elapsed = (time.perf_counter() - started) * 1000
    text = "\n".join(getattr(block, "text", "") for block in result.content)
    if result.is_error or (expect is not None and expect not in text):
        raise ServerFailed(f"{tool} answered with an error: {text[:300]}")
    return elapsed


class TreeMemorySampler:
    """Peak resident memory of every process below `root_pid` (the bench itself excluded),
    polled from /proc, so the server's children (runtimes, helpers) count too; never less than
    one process's own kernel high-water mark (VmHWM), which also holds a peak between polls."""

    def __init__(self, root_pid: int) -> None:
        self._root = root_pid
        self._peak = 0
        self._high_water: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> int:
        self._sample()
        self._stop.set()
        self._thread.join()
        return max(self._peak, max(self._high_water.values(), default=0))

    def _poll(self) -> None:
        while not self._stop.wait(SAMPLE_INTERVAL_S):
            self._sample()

    def _sample(self) -> None:
        total = 0
        for pid in descendants(self._root, own_programs_only=True):
            rss, hwm = _memory_of(pid)
            total += rss
            if hwm:
                self._high_water[pid] = max(self._high_water.get(pid, 0), hwm)
        self._peak = max(self._peak, total)


def descendants(root: int, *, own_programs_only: bool = False) -> list[int]:
    """Every live process below `root` in the process tree, from /proc. `own_programs_only`
    leaves out a child still running its parent's program (same command line): a child
    between fork or vfork and its exec shares its parent's memory (vfork: the very same pages),
    and summing both resident sets counted the server twice (666 MB for a 333 MB server, when a
    poll fell inside a `capy_execute` spawn)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, stack = [], [(pid, root) for pid in children.get(root, [])]
    while stack:
        pid, parent = stack.pop()
        if own_programs_only and _same_program(pid, parent):
            continue  # its own children, if any, have exec'd nothing of it either
        found.append(pid)
        stack.extend((child, pid) for child in children.get(pid, []))
    return found


def _same_program(pid: int, parent: int) -> bool:
    try:
        return (
            Path(f"/proc/{pid}/cmdline").read_bytes()
            == Path(f"/proc/{parent}/cmdline").read_bytes()
        )
    except OSError:
        return False


def _memory_of(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) in bytes; zeros for a process that is gone."""
    rss = hwm = 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return rss, hwm
