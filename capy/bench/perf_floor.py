"""The indexing floor, and the real text it and capy are timed on.

The floor is what any indexer of the same rows has to pay: the chunks capy makes of the same
inputs (computed before the clock starts), inserted in ONE transaction into the same kind of
database (a fresh SQLCipher file, same raw-key encryption, WAL, synchronous NORMAL, capy's own
migrations, so the same porter and trigram FTS5 tables), plus each raw input into a plain
table. capy is timed through `index_batch`, the path `capy index` of a folder takes: reading,
redaction, detection, chunking, hashing, zstd, vocabulary and bookkeeping all included.

Real text: the shared test data beside the repository (transcripts, a TREC collection's
topics, secret-scanner fixtures, SSRF payload lists) and the largest modules of this Python's
standard library, taken in a fixed order until the wanted size: third-party text of the kinds
an agent indexes (JSON lines, prose, code, configuration), never generated.
"""

from __future__ import annotations

import sysconfig
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_TESTDATA = REPO_ROOT.parent / "shared" / "testdata"
# Files smaller than this are mostly licence headers and one-line fixtures.
MIN_FILE_BYTES = 4096
TEXT_SUFFIXES = (".py", ".md", ".txt", ".json", ".jsonl", ".toml", ".yaml", ".tsv", ".trec", "")


@dataclass(frozen=True)
class RealText:
    paths: tuple[Path, ...]
    bytes: int


def real_text(target_bytes: int, max_files: int, cap: int) -> RealText:
    """Files from the shared test data, then the standard library's largest modules, each
    under the per-source cap, until `target_bytes` or `max_files`."""
    chosen: list[Path] = []
    total = 0
    for path in _candidates(cap):
        if total >= target_bytes or len(chosen) >= max_files:
            break
        chosen.append(path)
        total += path.stat().st_size
    return RealText(tuple(chosen), total)


def _candidates(cap: int):
    def fits(path: Path) -> bool:
        size = path.stat().st_size
        return path.is_file() and MIN_FILE_BYTES <= size <= cap and path.suffix in TEXT_SUFFIXES

    if SHARED_TESTDATA.is_dir():
        yield from sorted(p for p in SHARED_TESTDATA.rglob("*") if p.is_file() and fits(p))
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    modules = [p for p in stdlib.glob("*.py") if fits(p)]
    yield from sorted(modules, key=lambda p: (-p.stat().st_size, p.name))


@dataclass(frozen=True)
class Timed:
    """Wall seconds, and the CPU seconds this process spent (SQLite runs in it): on a shared
    machine the wall time measures the other load as well, the CPU time far less."""

    wall: float
    cpu: float


@contextmanager
def _clock(into: list[Timed]) -> Iterator[None]:
    wall, cpu = time.perf_counter(), time.process_time()
    yield
    into.append(Timed(time.perf_counter() - wall, time.process_time() - cpu))


def time_floor(documents: Sequence[str], chunked: Sequence[Sequence[Any]]) -> Timed:
    """Time to insert the documents and their chunks in one transaction into a fresh store."""
    from capy.bench.scratch import open_scratch_store, scratch_directory
    from capy.store import transaction
    from capy.store.chunkstore import insert_chunk_rows

    with scratch_directory() as directory, open_scratch_store(directory, "floor.db") as store:
        conn = store.conn
        conn.execute("CREATE TABLE floor_documents (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        timed: list[Timed] = []
        with _clock(timed), transaction(conn):
            for source_id, (document, chunks) in enumerate(zip(documents, chunked, strict=True), 1):
                conn.execute("INSERT INTO floor_documents VALUES (?, ?)", (source_id, document))
                insert_chunk_rows(conn, source_id, chunks)
        return timed[0]


def capy_chunks(items: Sequence[Any], ruleset: Any) -> list[list[Any]]:
    """The chunks capy stores for each item (redacted, typed as capy types it), untimed."""
    from capy.bench.scratch import scratch_store
    from capy.store.indexing import prepare_source

    with scratch_store() as store:
        return [
            prepare_source(
                store,
                item.content() if callable(item.content) else item.content,
                label=item.label,
                kind=item.kind,
                content_type=item.content_type,
                rules=ruleset,
            ).chunks
            or []
            for item in items
        ]


def time_capy(items: Sequence[Any], ruleset: Any) -> Timed:
    """Time for `index_batch` of the items into a fresh store; every item must index."""
    from capy.bench.scratch import scratch_store
    from capy.store.batch import BatchFailure, index_batch

    timed: list[Timed] = []
    with scratch_store() as store, _clock(timed):
        outcomes = index_batch(store, items, rules=ruleset)
    failed = [outcome for outcome in outcomes if isinstance(outcome, BatchFailure)]
    if failed:
        raise RuntimeError(f"{failed[0].label}: {failed[0].message}")
    return timed[0]
