"""The server's trigram catch-up: the blocks `capy_index` left for after its call, written on a
thread of their own (capy.store.trigram_backlog).

Like the embedder it steps aside for tool calls (`capy.foreground`): each slice of blocks
waits until no call has run for `QUIET_S`, so a burst of calls (an agent indexing several
files, then searching them) runs alone and the blocks follow in the pause after it. Run
beside the calls instead, on a loaded 2-core machine, it made them slower than writing the
blocks inline (`capy bench peer`: the calls after a 2 MB file waited for its slices), since
there is no idle core to run it on. Meanwhile searches read the pending chunks, and the
backlog's bound (capy.store.trigram_backlog) makes a call write its own blocks once the pause
has not come for long. A slice takes the process's write turn only when no call waits for it.
At exit it writes what is left for up to a second; the next server writes the rest.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capy.api.workspace import Workspace

logger = logging.getLogger("capy.server")

# Seconds without a tool call before a slice starts: longer than the gap between an agent's
# calls in one burst (milliseconds), shorter than the pause while it reads the answers.
QUIET_S = 0.25
# At exit, the longest the catch-up goes on (well inside the MCP SDK client's 2 s grace).
EXIT_S = 1.0


class TrigramCatchUp:
    """One daemon thread writing pending trigram blocks whenever poked; `stop` finishes them."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace
        self._poked = threading.Event()
        self._stop = threading.Event()
        self._deadline = float("inf")  # set at exit
        self._thread = threading.Thread(target=self._run, name="capy-trigram-catch-up", daemon=True)
        self._thread.start()

    def poke(self) -> None:
        """Blocks were deferred (or may have been): write them."""
        self._poked.set()

    def stop(self) -> None:
        """Write what is left within `EXIT_S`, then end the thread: a client gives a server
        a moment to exit before it kills it, and the exit checkpoint must still run. What is
        left waits for the next server, which pokes at start (capy.server.upkeep)."""
        self._deadline = time.monotonic() + EXIT_S
        self._stop.set()  # no more waiting for a pause
        self._poked.set()
        self._thread.join()

    def _run(self) -> None:
        while True:
            self._poked.wait()
            self._poked.clear()
            self.drain()
            if self._stop.is_set():
                return

    def drain(self) -> None:
        """Catch up until no marker is left; never raising (the markers wait for the next
        poke, and searches find their sources meanwhile)."""
        from capy.foreground import wait_until_quiet
        from capy.store.trigram_backlog import WRITE_TURN, catch_up

        try:
            left = True
            while left and time.monotonic() < self._deadline:
                wait_until_quiet(QUIET_S, self._stop)
                with self._workspace.store() as store, WRITE_TURN.catch_up():
                    left = catch_up(store.conn)
        except Exception:
            logger.warning("writing deferred trigram blocks failed", exc_info=True)
