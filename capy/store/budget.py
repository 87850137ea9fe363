"""Run a read within a work budget: SQLite's progress handler counts virtual-machine steps and
interrupts the read once the budget's steps are spent.

The budget is work, not time: the same query on the same store does the same steps on a fast
machine, a slow one and a loaded one, so whether an optional pass is cut (and so the results)
never depends on what else the machine runs. A step bound is a bound on the statements' own
work only: it does not bound wall or CPU time (a step that reads a long FTS5 doclist, decrypts
pages or waits for the disk counts as one, so a cold or slow store takes longer for the same
steps), and the steps a query takes change with the data and with SQLite's query plans. The
handler runs every hundred steps (STEPS_PER_CHECK), so counting costs little and the count is
exact to that grain. SQLite calls it from each statement's running total, FTS5's own prepared
statements included, so what one query counts also depends, within that grain per statement,
on what ran before it on the same connection: the same sequence of queries counts the same
everywhere, a single query can count slightly differently after other ones. An interrupted
read changes nothing (it is a SELECT), and the connection stays usable.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlcipher3

from capy.retrieval.model import WorkBudget

# Virtual-machine steps between progress-handler calls: the grain of the count.
STEPS_PER_CHECK = 100


def fetch_within(
    conn: sqlcipher3.Connection,
    sql: str,
    params: Sequence[object],
    budget: WorkBudget | None,
) -> list[tuple] | None:
    """All rows of `sql`, its steps added to `budget.spent`; None when the budget's limit was
    passed before it finished (None budget: no count, no limit)."""
    if budget is None:
        return conn.execute(sql, params).fetchall()
    if budget.exhausted:
        return None

    def spend() -> bool:
        budget.spent += STEPS_PER_CHECK
        return budget.exhausted

    conn.set_progress_handler(spend, STEPS_PER_CHECK)
    try:
        return conn.execute(sql, params).fetchall()
    except sqlcipher3.OperationalError as error:
        if "interrupted" in str(error):
            return None
        raise
    finally:
        conn.set_progress_handler(None, 0)
