"""Run a read within a time budget: SQLite's progress handler interrupts it past the deadline.

The budget is CPU time of the calling thread, not wall time: a loaded machine that pauses the
thread must not cut a query short that does little work (on a small store every query ends
well inside any budget, whatever else runs). The handler runs every thousand virtual-machine
steps, so the check costs next to nothing; one step that loads a long FTS5 doclist can still
overrun the deadline by a few milliseconds. An interrupted read changes nothing (it is a
SELECT), and the connection stays usable.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import sqlcipher3

# Virtual-machine steps between deadline checks.
_CHECK_EVERY = 1000


def fetch_within(
    conn: sqlcipher3.Connection, sql: str, params: Sequence[object], budget_ms: float | None
) -> list[tuple] | None:
    """All rows of `sql`, or None when it used more than `budget_ms` of CPU (None: no limit)."""
    if budget_ms is None:
        return conn.execute(sql, params).fetchall()
    deadline = time.thread_time() + budget_ms / 1000
    conn.set_progress_handler(lambda: time.thread_time() > deadline, _CHECK_EVERY)
    try:
        return conn.execute(sql, params).fetchall()
    except sqlcipher3.OperationalError as error:
        if "interrupted" in str(error):
            return None
        raise
    finally:
        conn.set_progress_handler(None, 0)


class CpuBudget:
    """One budget shared by the statements of one ranked list (None: no limit)."""

    def __init__(self, budget_ms: float | None) -> None:
        self._deadline = None if budget_ms is None else time.thread_time() + budget_ms / 1000

    def fetch(
        self, conn: sqlcipher3.Connection, sql: str, params: Sequence[object]
    ) -> list[tuple] | None:
        """All rows of `sql`, or None when the budget ran out before it finished."""
        remaining_ms = None
        if self._deadline is not None:
            remaining_ms = max(self._deadline - time.thread_time(), 0.0) * 1000
        return fetch_within(conn, sql, params, remaining_ms)
