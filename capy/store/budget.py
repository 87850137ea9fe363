"""Run a read within a time budget: SQLite's progress handler interrupts it past the deadline.

The handler runs every few thousand virtual-machine steps, so the check costs next to nothing
and a query is stopped within a fraction of a millisecond of its deadline. An interrupted read
changes nothing (it is a SELECT), and the connection stays usable.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import sqlcipher3

# VM instructions between deadline checks: about 0.05 ms of FTS5 work on this class of machine.
_CHECK_EVERY = 1000


def fetch_within(
    conn: sqlcipher3.Connection, sql: str, params: Sequence[object], budget_ms: float | None
) -> list[tuple] | None:
    """All rows of `sql`, or None when it ran past `budget_ms` (None: no limit)."""
    if budget_ms is None:
        return conn.execute(sql, params).fetchall()
    deadline = time.monotonic() + budget_ms / 1000
    conn.set_progress_handler(lambda: time.monotonic() > deadline, _CHECK_EVERY)
    try:
        return conn.execute(sql, params).fetchall()
    except sqlcipher3.OperationalError as error:
        if "interrupted" in str(error):
            return None
        raise
    finally:
        conn.set_progress_handler(None, 0)
