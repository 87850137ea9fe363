"""What `capy proxy` asks of the log: which message fingerprints it has recorded already
(the table `proxy_messages`, filled by a trigger as capsules are written; migration 0006)."""

from __future__ import annotations

from collections.abc import Iterable

import sqlcipher3


def recorded_fingerprints(conn: sqlcipher3.Connection, fingerprints: Iterable[str]) -> set[str]:
    wanted = sorted(set(fingerprints))
    found: set[str] = set()
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        marks = ",".join("?" * len(part))
        rows = conn.execute(
            f"SELECT fingerprint FROM proxy_messages WHERE fingerprint IN ({marks})", part
        )
        found.update(str(row[0]) for row in rows)
    return found
