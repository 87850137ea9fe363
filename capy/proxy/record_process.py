"""The proxy's recorder in a process of its own, fed through a pipe.

Recording an exchange (fingerprints, redaction, the spool, the drain into the capsule log) is
Python work that holds the interpreter lock. In the server's process it ran in a thread beside
the event loop, and the next request waited for the lock each time it woke (up to the switch
interval, 5 ms, at every wait), which is what a streamed reply's first chunk paid. So the server
only hands each relayed exchange to a writer thread, which sends it down a pipe (the thread
waits in `write`, without the lock), and `python -m capy.proxy.record_process PROJECT` records
it with the same `Recorder` as before, on another core when there is one.

The pipe carries the request body and the reply's bytes, as the in-process recorder got them,
never a header. The child ignores SIGINT (a Ctrl-C reaches the whole process group): it stops
when the pipe closes, after recording what was sent, so a stopped proxy loses nothing queued.
"""

from __future__ import annotations

import marshal
import queue
import subprocess
import sys
import threading
from contextlib import suppress
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from capy.proxy.recording import Exchange

_STOP = None
_LENGTH_BYTES = 8


class RecorderProcess:
    """What the server holds: `start`, `submit` (never blocks, never raises) and `close`."""

    def __init__(self, project_dir: Path, niceness: int, log: Callable[[str], None]):
        self._log = log
        self._queue: queue.SimpleQueue[Exchange | None] = queue.SimpleQueue()
        # Started now, so it loads the rules and opens the log while the server starts.
        self._child = subprocess.Popen(
            [sys.executable, "-m", "capy.proxy.record_process", str(project_dir), str(niceness)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            cwd=str(project_dir),
        )
        self._thread = threading.Thread(target=self._send, name="capy-proxy-recorder", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def submit(self, exchange: Exchange) -> None:
        self._queue.put(exchange)

    def close(self, timeout: float) -> None:
        """Send what is queued, close the pipe and wait (at most `timeout` seconds) for the
        child to record it."""
        self._queue.put(_STOP)
        if self._thread.is_alive():
            self._thread.join(timeout)
        else:
            self._close_pipe()
        try:
            self._child.wait(timeout)
        except subprocess.TimeoutExpired:
            self._log("the recorder did not finish in time; what it had not recorded is lost")
            self._child.kill()
            self._child.wait()

    def _send(self) -> None:
        pipe = self._child.stdin
        broken = False
        while True:
            exchange = self._queue.get()
            if exchange is _STOP:
                break
            if broken or pipe is None:
                continue
            try:
                pipe.write(frame(exchange))
                pipe.flush()
            except (OSError, ValueError):
                broken = True
                self._log("the recorder stopped; exchanges from now on are not recorded")
        self._close_pipe()

    def _close_pipe(self) -> None:
        if self._child.stdin is not None:
            with suppress(OSError):
                self._child.stdin.close()


def frame(exchange: Exchange) -> bytes:
    body = marshal.dumps(
        (
            exchange.request,
            exchange.received_at,
            list(exchange.reply),
            exchange.streamed,
            exchange.replied_at,
        )
    )
    return len(body).to_bytes(_LENGTH_BYTES, "big") + body


def read_frames(stream):
    """The exchanges on `stream` until it ends (a torn last frame is dropped)."""
    from capy.proxy.recording import Exchange

    while True:
        head = stream.read(_LENGTH_BYTES)
        if len(head) < _LENGTH_BYTES:
            return
        body = stream.read(int.from_bytes(head, "big"))
        try:
            request, received_at, reply, streamed, replied_at = marshal.loads(body)
        except (EOFError, ValueError, TypeError):
            return
        yield Exchange(request, received_at, reply, streamed, replied_at)


def main(project: str, niceness: str = "0") -> int:
    import signal
    from pathlib import Path

    from capy.drain_start import lower_priority

    lower_priority(niceness)  # background work: the server's replies come first

    from capy.proxy.recorder import Recorder
    from capy.rules import load_rules

    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def log(line: str) -> None:
        print(f"capy proxy: {line}", file=sys.stderr, flush=True)

    project_dir = Path(project)
    try:
        rules = load_rules(project_dir)
        recorder = Recorder(project_dir, rules, log)
    except Exception as problem:  # one line, never a traceback; the proxy relays all the same
        detail = getattr(problem, "message", None) or type(problem).__name__
        log(f"the recorder could not start ({detail}); exchanges are not recorded")
        for _exchange in read_frames(sys.stdin.buffer):
            pass
        return 1
    recorder.warm()
    recorder.start()
    for exchange in read_frames(sys.stdin.buffer):
        recorder.submit(exchange)
    # The pipe closed: the server is stopping; record what came, however long it takes (the
    # server waits for this process as long as it waited for its own thread before).
    recorder.close(timeout=None)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
