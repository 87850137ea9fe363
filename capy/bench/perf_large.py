"""The 1,000,000-chunk store of `capy bench perf --large`: built by bulk insert, kept for reuse.

Grown through `index_batch` a store that size took most of an hour here and never finished: the
trigram table alone indexes about 1 MB of text a second, and the mix `capy bench perf` grows
(`grow_store`) cuts about 800 bytes a chunk, so a million chunks are about 0.8 GB of text. This
builder writes the same rows faster, and only once per machine:
- documents of the same generator and mix of content types and sizes as `grow_store`, each made
  from its own seed (`capy.bench.perf_large_docs`) in worker processes that also cut it with
  capy's own chunker (its content type named), compress it and count its vocabulary; the rows
  are the ones `index_batch` writes for the same documents (a test compares them): a `sources`
  row (zstd raw content, counters kept by the store's triggers), the vocabulary, and each chunk
  in both FTS tables. Redaction is skipped (generated text holds no secrets). Made in one
  process from one random stream, the documents were the bottleneck (70-500 chunks a second);
- the two FTS tables are written at once, each by its own thread: the porter table, the sources
  and the vocabulary into the store itself, the trigram table into a second file of the same
  schema whose FTS5 shadow tables (`chunks_trigram_data`, `_idx`, `_docsize`, `_config`; it is
  an index only, so the smaller one to copy) are then copied into the store. Those tables are
  the whole index, so the result is the index the inserts would have made in place. The
  trigram writer bounds the build (about 0.24 ms of CPU a chunk, a third of all the CPU). FTS5
  merges as capy's batches do (incremental merging paused inside each batch,
  `capy.store.fts_tuning`); the build runs with `synchronous = OFF` and no journal, a
  throwaway file's settings, and the store is reopened as usual (in WAL mode) after;
- the finished store, its key (a throwaway key in a 0600 file beside it) and a sentence and an
  identifier of each document (the queries are drawn from them) are kept under the user's cache
  folder, keyed by everything that shapes the rows (capy's index version, the migrations, the
  generators' source, the builder's format, seed and size). A later run reuses it and reports
  `reused`; a run that stops half-way leaves no entry.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Chunks written in one transaction: FTS5 flushes its hash as segments within a batch anyway,
# so a larger batch saves only commits, and it is held in memory twice (queued and written).
BULK_BATCH_CHUNKS = 20_000
BULK_FORMAT = 2  # bump when the builder writes different rows
FTS_SHADOW_SUFFIXES = ("data", "idx", "content", "docsize", "config")
_QUEUED_BATCHES = 2
# Processes that make (generate, cut, count, compress) the documents; documents per round
# and per task, and rounds in flight, so the workers never wait for the writers' consumer.
MAKE_WORKERS = 2
ROUND_DOCUMENTS = 256
ROUND_CHUNKSIZE = 8
ROUNDS_AHEAD = 2
# Page cache of each writer: FTS5 reads segments back to merge them.
BUILD_CACHE_KIB = 256 * 1024

# (what is running, steps done, steps in all)
Progress = Callable[[str, int, int], None]


@dataclass
class LargeStore:
    store: Any
    chunks: int
    documents: int
    build_s: float
    reused: bool
    emitted: list[str] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)


@contextmanager
def large_store(
    size: int, seed: int, ruleset: Any, progress: Progress | None = None
) -> Iterator[LargeStore]:
    """The bulk-built store of at least `size` chunks, from the cache or built now."""
    folder = _cache_folder() / _cache_key(size, seed, ruleset)
    reused = (folder / "done.json").is_file()
    if not reused:
        _build_into(folder, size, seed, ruleset, progress)
    facts = json.loads((folder / "done.json").read_text(encoding="utf-8"))
    store = _open(folder / "knowledge.db", bytes.fromhex((folder / "key").read_text().strip()))
    try:
        yield LargeStore(
            store=store,
            chunks=facts["chunks"],
            documents=facts["documents"],
            build_s=facts["build_s"],
            reused=reused,
            emitted=facts["emitted"],
            identifiers=facts["identifiers"],
        )
    finally:
        store.close()


def _cache_folder() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "capy-bench" / "perf-large"


def _cache_key(size: int, seed: int, ruleset: Any) -> str:
    from capy.bench import perf, perf_large_docs, textgen
    from capy.digests import sha256
    from capy.store.migrations import MIGRATIONS

    generation = (textgen, perf_large_docs)
    parts = [
        f"format {BULK_FORMAT} size {size} seed {seed} types {perf.CONTENT_TYPES}",
        ruleset.index_version,
        *(migration.name for migration in MIGRATIONS),
        *(Path(module.__file__).read_text(encoding="utf-8") for module in generation),
    ]
    return sha256("\n".join(parts).encode()).hexdigest()[:24]


def _open(path: Path, raw_key: bytes):
    from capy.bench.scratch import _silent
    from capy.store import DatabaseKey, KeySource, Store, StoreLocation, open_database

    key = DatabaseKey(raw_key, KeySource(name="db", label="a throwaway benchmark key"))
    conn = open_database(path, key, notify=_silent)
    location = StoreLocation(path=path, project_root=path.parent, key_source=key.source)
    return Store(conn=conn, location=location, key=key)


# ---- building ------------------------------------------------------------------------------


@dataclass
class _Batch:
    sources: list[tuple] = field(default_factory=list)  # `sources` rows
    rows: list[tuple] = field(default_factory=list)  # (rowid, title, content, source_id, ordinal)
    terms: Counter[str] = field(default_factory=Counter)


def _build_into(
    folder: Path, size: int, seed: int, ruleset: Any, progress: Progress | None
) -> None:
    from capy.bench.scratch import scratch_key

    folder.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(folder, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=".building-", dir=folder.parent))
    try:
        raw_key = scratch_key().raw
        key_file = work / "key"
        key_file.touch(mode=0o600)
        key_file.write_text(raw_key.hex() + "\n", encoding="utf-8")
        started = time.perf_counter()
        facts = _build(work, raw_key, size, seed, ruleset, progress)
        facts["build_s"] = time.perf_counter() - started
        (work / "done.json").write_text(json.dumps(facts), encoding="utf-8")
        os.replace(work, folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _build(
    work: Path, raw_key: bytes, size: int, seed: int, ruleset: Any, progress: Progress | None
) -> dict:
    # The store itself (sources, vocabulary, porter table) and the trigram table's file: the
    # trigram table is an index only, so its side file is the smaller one to copy over.
    writers = [
        _Writer(work / "knowledge.db", raw_key, "chunks", with_sources=True),
        _Writer(work / "trigram.db", raw_key, "chunks_trigram", with_sources=False),
    ]
    for writer in writers:
        writer.start()
    emitted: list[str] = []
    identifiers: list[str] = []
    chunks = documents = 0
    try:
        for batch, chunks, made in _batches(seed, size, ruleset, emitted, identifiers):
            documents = made
            for writer in writers:
                writer.put(batch)
            if progress:
                progress(f"bulk-building a {size:,}-chunk store", min(chunks, size), size)
    finally:
        for writer in writers:
            writer.finish()
    if progress:
        progress("copying the trigram index into the store", 0, 1)
    _copy_fts_table(work / "knowledge.db", work / "trigram.db", raw_key, "chunks_trigram")
    # The file and everything opening it left beside it (-wal, -shm, .keycheck, .lock).
    for leftover in work.glob("trigram.db*"):
        leftover.unlink()
    return {
        "chunks": chunks,
        "documents": documents,
        "emitted": emitted,
        "identifiers": identifiers,
    }


def _batches(
    seed: int, size: int, ruleset: Any, emitted: list[str], identifiers: list[str]
) -> Iterator[tuple[_Batch, int, int]]:
    """The documents of the store, made in worker processes a round ahead of the writers and
    gathered in order into batches; with the chunks and documents made so far. Each
    document's sentence and identifier for the queries go to `emitted` and `identifiers`."""
    import multiprocessing

    from capy.bench.perf_large_docs import make_document, start_worker

    now = int(time.time())
    version = ruleset.index_version
    # spawn, not fork: the writers' threads are running and may hold locks a fork would copy.
    context = multiprocessing.get_context("spawn")
    workers = context.Pool(MAKE_WORKERS, start_worker, (ruleset.view("chunking"),))
    made = 0

    def submit() -> Any:
        nonlocal made
        tasks = [(seed, number, version, now) for number in range(made, made + ROUND_DOCUMENTS)]
        made += ROUND_DOCUMENTS
        return workers.map_async(make_document, tasks, chunksize=ROUND_CHUNKSIZE)

    try:
        batch, chunks, documents = _Batch(), 0, 0
        ahead = [submit() for _ in range(ROUNDS_AHEAD)]
        while True:
            done = ahead.pop(0).get()
            ahead.append(submit())
            for document in done:
                batch.sources.append(document.source)
                batch.rows.extend(document.rows)
                batch.terms.update(document.terms)
                emitted.extend(filter(None, (document.emitted,)))
                identifiers.extend(filter(None, (document.identifier,)))
                chunks += len(document.rows)
                documents += 1
                if chunks >= size:
                    yield batch, chunks, documents
                    return
                if len(batch.rows) >= BULK_BATCH_CHUNKS:
                    yield batch, chunks, documents
                    batch = _Batch()
    finally:
        workers.terminate()
        workers.join()


class _Writer:
    """One thread writing one FTS table (and, for the store itself, sources and vocabulary)
    into its own file. SQLite runs without the interpreter lock, so the two writers and the
    generator share the cores."""

    def __init__(self, path: Path, raw_key: bytes, table: str, *, with_sources: bool) -> None:
        self._path, self._key, self._table = path, raw_key, table
        self._with_sources = with_sources
        self._queue: queue.Queue[_Batch | None] = queue.Queue(maxsize=_QUEUED_BATCHES)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._error: BaseException | None = None

    def start(self) -> None:
        self._thread.start()

    def put(self, batch: _Batch) -> None:
        while self._thread.is_alive():
            try:
                self._queue.put(batch, timeout=1.0)
                return
            except queue.Full:
                continue
        self._raise()

    def finish(self) -> None:
        if self._thread.is_alive():
            self._queue.put(None)
        self._thread.join()
        self._raise()

    def _raise(self) -> None:
        if self._error is not None:
            raise RuntimeError(f"building {self._path.name}: {self._error}") from self._error

    def _run(self) -> None:
        try:
            store = _open(self._path, self._key)
            try:
                _throwaway_file_settings(store.conn)
                store.conn.execute(f"PRAGMA cache_size = -{BUILD_CACHE_KIB}")
                while (batch := self._queue.get()) is not None:
                    self._write(store.conn, batch)
            finally:
                store.close()
        except BaseException as error:  # reported by put()/finish() in the building thread
            self._error = error

    def _write(self, conn: Any, batch: _Batch) -> None:
        from capy.store.chunkstore import insert_fts_rows
        from capy.store.database import transaction
        from capy.store.fts_tuning import bulk_load
        from capy.store.vocabulary import apply_term_delta

        with transaction(conn), bulk_load(conn):
            if self._with_sources:
                conn.executemany(
                    "INSERT INTO sources (id, label, kind, content_hash, content_type, raw, "
                    "raw_size, index_version, created_at, indexed_at, chunk_count) "
                    "VALUES (?, ?, 'durable', ?, ?, ?, ?, ?, ?, ?8, ?)",
                    batch.sources,
                )
                apply_term_delta(conn, batch.terms, Counter())
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES ('index_version', ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (batch.sources[0][6],),
                )
            insert_fts_rows(conn, self._table, batch.rows)


def _throwaway_file_settings(conn: Any) -> None:
    """No fsync and no journal while the store is built: a build that fails is thrown away
    whole. With the WAL every page was written twice (a crisis merge or the final copy of
    the trigram index wrote hundreds of MB into it before the checkpoint wrote them again);
    the store goes back to the WAL when it is next opened (`open_database`)."""
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA journal_mode = OFF").fetchone()


def _copy_fts_table(target: Path, donor: Path, raw_key: bytes, table: str) -> None:
    """Replace `table`'s index in `target` by the one built in `donor` (same schema, same key)."""
    store = _open(target, raw_key)
    try:
        conn = store.conn
        _throwaway_file_settings(conn)
        conn.execute(f"ATTACH DATABASE ? AS donor {store.key.attach_clause()}", (str(donor),))
        conn.execute("BEGIN IMMEDIATE")
        for suffix in FTS_SHADOW_SUFFIXES:
            shadow = f"{table}_{suffix}"
            if not _has_table(conn, "donor", shadow):  # an index-only table has no _content
                continue
            conn.execute(f"DELETE FROM main.{shadow}")
            conn.execute(f"INSERT INTO main.{shadow} SELECT * FROM donor.{shadow}")
        conn.execute("COMMIT")
        conn.execute("DETACH DATABASE donor")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        store.close()


def _has_table(conn: Any, schema: str, name: str) -> bool:
    found = conn.execute(
        f"SELECT 1 FROM {schema}.sqlite_master WHERE type = 'table' AND name = ?", (name,)
    ).fetchone()
    return found is not None
