"""The server's kept-open connections: reused, consistent while other processes write, and
dropped when the file or its key changes underneath them."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from capy.store import StoreError, WrongKeyError, open_store
from capy.store.database import read_snapshot
from capy.store.pool import StorePool

WRITER = """
import sys
from capy.rules import load_rules
from capy.store import open_store
from capy.store.indexing import index_content

worker, count = sys.argv[1], int(sys.argv[2])
rules = load_rules()
body = "\\n\\n".join(f"## part {n}\\n\\n" + "some words here " * 40 for n in range(30))
for number in range(count):
    with open_store() as store:  # a fresh process-like open per write, as hooks do
        text = body + f"\\n{worker} {number}"
        index_content(store, text, label=f"{worker}-{number}", rules=rules)
print("done")
"""


def _pool(project: Path) -> StorePool:
    return StorePool(project)


def test_a_checkout_reuses_the_open_connection(env) -> None:
    pool = _pool(env.project)
    with pool.checkout() as first:
        conn = first.conn
    with pool.checkout() as second:
        assert second.conn is conn
        # Two calls at once get two connections; both stay for reuse.
        with pool.checkout() as third:
            assert third.conn is not conn
    assert pool.idle_stores() == 2
    pool.close()
    assert pool.idle_stores() == 0
    with pytest.raises(StoreError), pool.checkout():
        pass


def test_a_transaction_left_open_is_rolled_back_on_return(env) -> None:
    pool = _pool(env.project)
    with pool.checkout() as store:
        store.conn.execute("BEGIN IMMEDIATE")
        store.conn.execute("INSERT INTO meta (key, value) VALUES ('left', 'open')")
    with open_store(env.project) as other:  # the write lock is free again
        assert other.conn.execute("SELECT value FROM meta WHERE key = 'left'").fetchone() is None
    pool.close()


def test_writers_in_other_processes_lose_nothing_and_reads_see_whole_sources(env) -> None:
    pool = _pool(env.project)
    with pool.checkout():
        pass  # the file exists before the writers start
    workers, per_worker = 3, 8
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, f"w{worker}", str(per_worker)],
            cwd=env.project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in range(workers)
    ]
    half_seen: list[tuple[int, int, int]] = []
    reads = 0
    while any(process.poll() is None for process in processes) or reads < 3:
        with pool.checkout() as store, read_snapshot(store.conn) as conn:
            # Every source a reader sees has all of its chunks, never part of them.
            for source_id, expected in conn.execute("SELECT id, chunk_count FROM sources"):
                low, high = source_id << 20, (source_id << 20) + (1 << 20) - 1
                found = conn.execute(
                    "SELECT count(*) FROM chunks WHERE rowid BETWEEN ? AND ?", (low, high)
                ).fetchone()[0]
                if found != expected or found == 0:
                    half_seen.append((source_id, expected, found))
        reads += 1
    for process in processes:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
    assert half_seen == []
    with pool.checkout() as store:
        count = store.conn.execute("SELECT count(*) FROM sources").fetchone()[0]
    assert count == workers * per_worker
    pool.close()


def test_a_deleted_store_is_noticed_and_opened_fresh(env) -> None:
    pool = _pool(env.project)
    env.add_source("before")
    with pool.checkout() as store:
        assert store.conn.execute("SELECT count(*) FROM sources").fetchone()[0] == 1
    for suffix in ("", "-wal", "-shm"):
        Path(f"{env.db_path}{suffix}").unlink(missing_ok=True)
    with pool.checkout() as store:
        assert store.conn.execute("SELECT count(*) FROM sources").fetchone()[0] == 0
    assert env.db_path.exists()
    pool.close()


def _rotate(env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "capy", "encrypt", "--rotate"],
        cwd=env.project,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_file_replaced_underneath_is_followed(env) -> None:
    env.add_source("kept")
    backup = env.db_path.with_name("restore.db")
    with open_store(env.project) as store:
        store.conn.execute("VACUUM INTO ?", (str(backup),))
    pool = _pool(env.project)
    with pool.checkout() as in_flight:
        in_flight.conn.execute(
            "INSERT INTO sources (label, kind, content_hash, content_type, raw, raw_size) "
            "VALUES ('later', 'durable', 'h', 'plaintext', x'00', 1)"
        )
        # A restore from a backup while a call runs, done as a careful person does it: the
        # old file's WAL goes too.
        for suffix in ("-wal", "-shm"):
            Path(f"{env.db_path}{suffix}").unlink(missing_ok=True)
        os.replace(backup, env.db_path)
        with pool.checkout() as store:
            assert [row[0] for row in store.conn.execute("SELECT label FROM sources")] == ["kept"]
    # The call that ran on the old file gave back a connection to it: closed, never reused.
    assert pool.idle_stores() == 1
    with pool.checkout() as store:
        assert store.conn is not in_flight.conn
        assert [row[0] for row in store.conn.execute("SELECT label FROM sources")] == ["kept"]
    pool.close()


def test_a_rotation_waits_for_the_server_and_a_foreign_key_is_one_sentence(env) -> None:
    env.add_source("kept")
    pool = _pool(env.project)
    with pool.checkout():
        pass
    # Kept-open connections are what `capy encrypt` checks for: it refuses, in one sentence.
    refused = _rotate(env)
    assert refused.returncode != 0 and "in use by another process" in refused.stderr
    pool.close()
    rotated = _rotate(env)
    assert rotated.returncode == 0, rotated.stderr
    pool = _pool(env.project)
    with pool.checkout() as store:  # the new file under the new key, the same data
        assert [row[0] for row in store.conn.execute("SELECT label FROM sources")] == ["kept"]
    # A key file replaced by one that never opened this file: the pool reopens and says so.
    os.replace(env.key_file, env.key_file.with_name("db.key.real"))
    env.key_file.write_text("ab" * 32 + "\n")
    os.chmod(env.key_file, 0o600)
    with pytest.raises(WrongKeyError) as raised, pool.checkout():
        pass
    assert "different key" in raised.value.message
    pool.close()


def test_close_reaches_connections_from_other_threads(env) -> None:
    pool = _pool(env.project)
    opened = []

    def call() -> None:
        with pool.checkout() as store:
            opened.append(store.conn)

    threads = [threading.Thread(target=call) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    pool.close()
    for conn in opened:
        with pytest.raises(Exception, match="closed"):
            conn.execute("SELECT 1")
