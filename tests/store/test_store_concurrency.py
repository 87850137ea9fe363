"""Several real processes writing one database at once: nothing lost, nothing locked, intact."""

from __future__ import annotations

import subprocess
import sys
import time

from capy.store import open_store

WRITER = """
import sys, time
from capy.store import open_store, transaction

worker, count, start = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
while time.time() < start:  # every process opens the still-missing file at the same moment
    pass
with open_store() as store:
    for number in range(count):
        with transaction(store.conn) as conn:
            conn.execute(
                "INSERT INTO sources (label, kind, content_hash, content_type, raw, raw_size) "
                "VALUES (?, 'ephemeral', 'h', 'plaintext', randomblob(2000), 2000)",
                (f"{worker}-{number}",),
            )
            # Read-modify-write inside the transaction: lost updates would show in the total.
            total = conn.execute("SELECT value FROM meta WHERE key = 'writes'").fetchone()
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('writes', ?)",
                (str(int(total[0]) + 1 if total else 1),),
            )
        if number % 10 == 0:  # a fresh connection now and then, as hook processes do
            store.conn.close()
            store.conn = open_store().conn
print("done")
"""


def test_concurrent_writers_lose_nothing(env) -> None:
    workers, per_worker = 6, 40
    start = str(time.time() + 1.5)
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, f"w{worker}", str(per_worker), start],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in range(workers)
    ]
    results = [process.communicate(timeout=180) for process in processes]
    for process, (out, err) in zip(processes, results, strict=True):
        assert process.returncode == 0, err
        assert out.strip() == "done"
        assert "locked" not in err and "damaged" not in err
    assert list(env.db_path.parent.glob("*.corrupt-*")) == []
    with open_store() as store:
        conn = store.conn
        assert conn.execute("SELECT count(*) FROM sources").fetchone() == (workers * per_worker,)
        writes = conn.execute("SELECT value FROM meta WHERE key = 'writes'").fetchone()
        assert writes == (str(workers * per_worker),)
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert len(set(env.labels())) == workers * per_worker
