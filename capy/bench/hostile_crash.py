"""kill -9 runs / stores damaged: a real SQLCipher store, indexed into by a worker process that
is killed with SIGKILL at a random moment, then opened and checked.

A store counts as damaged when it no longer opens with its key, when `PRAGMA integrity_check`
says anything but ok, when a source is half-indexed (no chunks, or its porter and trigram
chunk tables disagree), or when a source the worker reported committed is missing. A control
store with a page overwritten on purpose must count as damaged, or the check sees nothing.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from capy.bench.hostile_common import Scratch

WORKER = "import sys; from capy.bench.hostile_crash import worker; worker(sys.argv[1], sys.argv[2])"
PAGE = 4096  # SQLCipher's default page size
KILL_WINDOW = (0.1, 1.5)  # seconds after the worker's first commit


def _open(db_path: Path, key_hex: str, notices: list[str] | None = None):
    """The store opened from its parts with a raw key (no settings, no key file); what the
    store says while opening (a damaged file moved aside) lands in `notices`."""
    from capy.store import DatabaseKey, KeySource, Store, StoreLocation, open_database

    key = DatabaseKey(bytes.fromhex(key_hex), KeySource("db", "CAPY_DB_KEY"))
    conn = open_database(db_path, key, notify=(notices if notices is not None else []).append)
    return Store(conn=conn, location=StoreLocation(db_path, db_path.parent, key.source), key=key)


def worker(db_path: str, done_path: str) -> None:
    """Index sources one after another, appending each committed label to `done_path`."""
    from capy.rules import load_rules
    from capy.store.indexing import index_content

    rules = load_rules()
    rng = random.Random()
    with (
        _open(Path(db_path), os.environ["CAPY_DB_KEY"]) as store,
        open(done_path, "a", encoding="utf-8") as done,
    ):
        for number in range(100_000):
            label = f"crash-source-{number}"
            lines = [f"line {i} of {label}: quokka {rng.random():.12f}" for i in range(400)]
            index_content(store, "\n".join(lines), label=label, kind="durable", rules=rules)
            done.write(label + "\n")
            done.flush()


def check(db_path: Path, key_hex: str, committed: list[str]) -> str | None:
    """Why the store is damaged, or None when it is whole."""
    notices: list[str] = []
    try:
        store = _open(db_path, key_hex, notices)
    except Exception as error:  # any failure to open a killed store is damage
        return f"does not open: {type(error).__name__}"
    if notices:  # opening replaced a damaged file with a fresh one
        store.close()
        return f"moved aside on open: {notices[0][:200]}"
    with store:
        conn = store.conn
        verdict = [row[0] for row in conn.execute("PRAGMA integrity_check").fetchall()]
        if verdict != ["ok"]:
            return f"integrity_check: {'; '.join(verdict)[:200]}"
        # A trigram row holds a block of chunks (capy.store.trigram_blocks).
        from capy.store.trigram_blocks import TRIGRAM_BLOCK_CHUNKS as BLOCK

        half = conn.execute(
            "SELECT s.label FROM sources s WHERE "
            "(SELECT count(*) FROM chunks WHERE source_id = s.id) = 0 OR "
            f"((SELECT count(*) FROM chunks WHERE source_id = s.id) + {BLOCK - 1}) / {BLOCK} != "
            "(SELECT count(*) FROM chunks_trigram "
            "WHERE rowid BETWEEN s.id << 20 AND (s.id << 20) + 1048575)"
        ).fetchall()
        if half:
            return f"half-indexed source: {half[0][0]}"
        labels = {row[0] for row in conn.execute("SELECT label FROM sources")}
        lost = [label for label in committed if label not in labels]
        if lost:
            return f"committed source lost: {lost[0]}"
    return None


def _one_run(scratch: Scratch, index: int, rng: random.Random) -> tuple[str | None, float]:
    folder = scratch.root / "crash" / f"run-{index}"
    folder.mkdir(parents=True)
    db_path, done_path = folder / "knowledge.db", folder / "done.txt"
    process = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(db_path), str(done_path)],
        env=scratch.env,
        cwd=scratch.project,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not (done_path.exists() and done_path.stat().st_size) and process.poll() is None:
            if time.monotonic() > deadline:
                break
            time.sleep(0.02)
        delay = rng.uniform(*KILL_WINDOW)
        time.sleep(delay)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait()
    committed = done_path.read_text(encoding="utf-8").split() if done_path.exists() else []
    if not committed:
        return "the worker never committed a source", delay
    return check(db_path, scratch.db_key, committed), delay


def control_damage(scratch: Scratch) -> bool:
    """A store with a page overwritten on purpose: the check must call it damaged."""
    from capy.store.indexing import index_content

    path = scratch.root / "crash" / "control.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    with _open(path, scratch.db_key) as store:
        for number in range(20):
            index_content(store, f"control source {number} quokka " * 200, label=f"c{number}")
    with path.open("r+b") as handle:  # a few bytes inside every page after the first
        for offset in range(PAGE + 100, path.stat().st_size, PAGE):
            handle.seek(offset)
            handle.write(os.urandom(16))
    labels = [f"c{number}" for number in range(20)]
    return check(path, scratch.db_key, labels) is not None


def run(scratch: Scratch, *, runs: int) -> dict:
    rng = random.Random()
    damaged = []
    for index in range(runs):
        why, delay = _one_run(scratch, index, rng)
        if why is not None:
            damaged.append({"run": index, "killed_after_s": round(delay, 2), "why": why})
    return {
        "runs": runs,
        "damaged": len(damaged),
        "details": damaged,
        "control_seen": control_damage(scratch),
    }
