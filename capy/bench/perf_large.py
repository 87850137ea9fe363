"""The 1,000,000-chunk store of `capy bench perf --large`: built by bulk insert, kept for reuse.

Grown through `index_batch` a store that size took most of an hour here and never finished: the
trigram table alone indexes about 1 MB of text a second, and the mix `capy bench perf` grows
(`grow_store`) cuts about 800 bytes a chunk, so a million chunks are about 0.8 GB of text. This
builder writes the same rows faster, and only once per machine:
- the same documents as `grow_store` (the same generator, seed and mix of content types, each cut
  by capy's own chunker with its content type named), and the same rows: a `sources` row (zstd
  raw content, counters kept by the store's triggers), the vocabulary, and each chunk in both FTS
  tables. Redaction is skipped (generated text holds no secrets);
- the two FTS tables are written at once, on the machine's two cores: the trigram table, the
  sources and the vocabulary into the store itself, the porter table into a second file of the
  same schema whose FTS5 shadow tables (`chunks_data`, `_idx`, `_content`, `_docsize`,
  `_config`) are then copied into the store. Those tables are the whole index, so the result is
  the index the inserts would have made in place. FTS5 merges as capy's batches do (incremental
  merging paused inside each batch, `capy.store.fts_tuning`); the build runs with
  `synchronous = OFF`, a throwaway file's setting, and the store is reopened as usual after;
- the finished store, its key (a throwaway key in a 0600 file beside it) and the sentences the
  queries are drawn from are kept under the user's cache folder, keyed by everything that shapes
  the rows (capy's index version, the migrations, the generator's source, the builder's
  format, seed and size). A
  later run reuses it and reports `reused`; a run that stops half-way leaves no entry.
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

# Chunks handed to the writers at once: small enough that the writers start while the next
# batch is generated, large enough that FTS5 flushes full segments between commits.
BULK_BATCH_CHUNKS = 5_000
BULK_FORMAT = 1  # bump when the builder writes different rows
FTS_SHADOW_SUFFIXES = ("data", "idx", "content", "docsize", "config")
_QUEUED_BATCHES = 2
# Processes that cut, count and compress the generated documents, and documents per round.
CUT_WORKERS = 2
ROUND_DOCUMENTS = 64
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
    from capy.bench import perf, textgen
    from capy.digests import sha256
    from capy.store.migrations import MIGRATIONS

    parts = [
        f"format {BULK_FORMAT} size {size} seed {seed} types {perf.CONTENT_TYPES}",
        ruleset.index_version,
        *(migration.name for migration in MIGRATIONS),
        Path(textgen.__file__).read_text(encoding="utf-8"),
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
    from capy.bench.textgen import TextGenerator

    # The store itself (sources, vocabulary, trigram table) and the porter table's file.
    writers = [
        _Writer(work / "knowledge.db", raw_key, "chunks_trigram", with_sources=True),
        _Writer(work / "porter.db", raw_key, "chunks", with_sources=False),
    ]
    for writer in writers:
        writer.start()
    generator = TextGenerator(seed)
    chunks = documents = 0
    try:
        for batch, chunks, made in _batches(generator, size, ruleset):
            documents = made
            for writer in writers:
                writer.put(batch)
            if progress:
                progress(f"bulk-building a {size:,}-chunk store", min(chunks, size), size)
    finally:
        for writer in writers:
            writer.finish()
    if progress:
        progress("copying the porter index into the store", 0, 1)
    _copy_fts_table(work / "knowledge.db", work / "porter.db", raw_key, "chunks")
    # The file and everything opening it left beside it (-wal, -shm, .keycheck, .lock).
    for leftover in work.glob("porter.db*"):
        leftover.unlink()
    return {
        "chunks": chunks,
        "documents": documents,
        "emitted": generator.emitted,
        "identifiers": generator.identifiers,
    }


def _batches(generator: Any, size: int, ruleset: Any) -> Iterator[tuple[_Batch, int, int]]:
    """The documents `grow_store` indexes, cut and counted, a batch at a time; with the chunks
    and documents made so far. This process generates the documents in order (one random
    stream); worker processes cut, count and compress them, a round behind the generation."""
    import multiprocessing

    from capy.bench.perf import CONTENT_TYPES

    now = int(time.time())
    # spawn, not fork: the writers' threads are running and may hold locks a fork would copy.
    context = multiprocessing.get_context("spawn")
    workers = context.Pool(CUT_WORKERS, _start_worker, (ruleset.view("chunking"),))
    made = 0

    def generate() -> list[tuple[tuple, tuple[int, int]]]:
        nonlocal made
        docs = []
        for _ in range(ROUND_DOCUMENTS):
            kind = CONTENT_TYPES[made % len(CONTENT_TYPES)]
            text = generator.document(kind, generator.rng.randint(2_000, 24_000))
            made += 1
            marks = (len(generator.emitted), len(generator.identifiers))
            docs.append(((made, f"perf/{made - 1}", kind, text, ruleset.index_version, now), marks))
        return docs

    try:
        batch, chunks, documents = _Batch(), 0, 0
        current = generate()
        ahead = workers.map_async(_cut, [doc for doc, _ in current])
        while True:
            upcoming = generate()
            done = ahead.get()
            ahead = workers.map_async(_cut, [doc for doc, _ in upcoming])
            for (source, rows, terms), (emitted, identifiers) in zip(
                done, (marks for _, marks in current), strict=True
            ):
                batch.sources.append(source)
                batch.rows.extend(rows)
                batch.terms.update(terms)
                chunks += len(rows)
                documents += 1
                if chunks >= size:  # queries come only from documents the store holds
                    del generator.emitted[emitted:], generator.identifiers[identifiers:]
                    yield batch, chunks, documents
                    return
                if len(batch.rows) >= BULK_BATCH_CHUNKS:
                    yield batch, chunks, documents
                    batch = _Batch()
            current = upcoming
    finally:
        workers.terminate()
        workers.join()


_chunking: Any = None


def _start_worker(chunking: Any) -> None:
    global _chunking
    _chunking = chunking


def _cut(document: tuple) -> tuple[tuple, list[tuple], Counter[str]]:
    """One document's `sources` row, chunk rows and vocabulary counts (in a worker)."""
    from capy.digests import sha256
    from capy.store.chunkstore import chunk_for_index, chunk_terms
    from capy.store.codec import compress_text
    from capy.store.migrations import chunk_rowid

    source_id, label, kind, text, version, now = document
    cut = chunk_for_index(text, kind, label, _chunking)
    data = text.encode("utf-8")
    source = (
        source_id,
        label,
        sha256(data).hexdigest(),
        kind,
        compress_text(text),
        len(data),
        version,
        now,
        len(cut),
    )
    rows = [
        (chunk_rowid(source_id, ordinal), chunk.title, chunk.content, source_id, ordinal)
        for ordinal, chunk in enumerate(cut)
    ]
    return source, rows, chunk_terms(cut)


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
                store.conn.execute("PRAGMA synchronous = OFF")
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


def _copy_fts_table(target: Path, donor: Path, raw_key: bytes, table: str) -> None:
    """Replace `table`'s index in `target` by the one built in `donor` (same schema, same key)."""
    store = _open(target, raw_key)
    try:
        conn = store.conn
        conn.execute(f"ATTACH DATABASE ? AS donor {store.key.attach_clause()}", (str(donor),))
        conn.execute("BEGIN IMMEDIATE")
        for suffix in FTS_SHADOW_SUFFIXES:
            shadow = f"{table}_{suffix}"
            conn.execute(f"DELETE FROM main.{shadow}")
            conn.execute(f"INSERT INTO main.{shadow} SELECT * FROM donor.{shadow}")
        conn.execute("COMMIT")
        conn.execute("DETACH DATABASE donor")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        store.close()
