"""The server's trigram catch-up: the blocks `capy_index` left for after its call, written on a
thread of their own (capy.store.trigram_backlog).

It starts at once when poked (an index call deferred blocks, or the server started on a store
with markers left by an earlier one), not after a quiet spell as the embedder does: the work
is the calls' own, deferred by moments, and runs mostly inside SQLite with the GIL released,
beside the next call's Python (redaction, chunking). Its transactions are short and take the
process's write turn only when no call waits for it. At exit it writes what is left, so a
store the server leaves holds every block.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capy.api.workspace import Workspace

logger = logging.getLogger("capy.server")


class TrigramCatchUp:
    """One daemon thread writing pending trigram blocks whenever poked; `stop` finishes them."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace
        self._poked = threading.Event()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="capy-trigram-catch-up", daemon=True)
        self._thread.start()

    def poke(self) -> None:
        """Blocks were deferred (or may have been): write them."""
        self._poked.set()

    def stop(self) -> None:
        """Write what is left, then end the thread."""
        self._stopping = True
        self._poked.set()
        self._thread.join()

    def _run(self) -> None:
        while True:
            self._poked.wait()
            self._poked.clear()
            self.drain()
            if self._stopping:
                return

    def drain(self) -> None:
        """Catch up until no marker is left; never raising (the markers wait for the next
        poke, and searches find their sources meanwhile)."""
        from capy.store.trigram_backlog import WRITE_TURN, catch_up

        try:
            left = True
            while left:
                with self._workspace.store() as store, WRITE_TURN.catch_up():
                    left = catch_up(store.conn)
        except Exception:
            logger.warning("writing deferred trigram blocks failed", exc_info=True)
