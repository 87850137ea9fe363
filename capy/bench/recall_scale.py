"""`capy bench recall --scale N`: recall timed over N capsules (LoCoMo turns repeated as further
sessions), drained by the pipeline as a user's drain runs it, without a reranker.

Building 100,000 capsules takes minutes (the drain is most of it), while what is measured is
recall. With `reuse`, the drained log is kept under the user's cache folder
(`capy-bench/recall-scale/KEY/`), keyed by everything that shapes its rows: the size, the
LoCoMo file, the packs the stages read (the capsules pack without its `recall` section, which
only recall reads), the capsule migrations, the embedder and the source of the modules that
make the rows. A later run with the same key opens it instead of building it again, and says
so; the build's seconds are those of the run that built it.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from capy.bench.metrics import percentile

SCALE_QUERIES = 200
SCALE_GOAL_MS = 50.0
EMBED = "embed"
# Bumped when the way the scale log is built changes in a way the key does not see.
SCALE_FORMAT = 1
# Modules whose code decides the rows the scale log holds (beside the packs).
_SHAPING_MODULES = (
    "capy.bench.capsules_import",
    "capy.capsules.extraction",
    "capy.capsules.importing",
    "capy.capsules.summarising",
    "capy.capsules.stages.chunk",
    "capy.capsules.stages.embed",
    "capy.capsules.stages.extract",
    "capy.capsules.stages.link",
    "capy.capsules.stages.summarise",
)
Progress = Callable[[str, int, int], None]


def scale_check(
    capsules: int,
    locomo: Path | None,
    *,
    progress: Progress | None = None,
    reuse: bool = False,
) -> dict[str, Any]:
    from capy.bench.recall_locomo import load_locomo

    if locomo is None:
        return {"skipped": "no LoCoMo file"}
    _, questions = load_locomo(locomo)
    asked = [q.question for q in questions if q.half == "dev"][:SCALE_QUERIES]
    with _scale_log(capsules, locomo, reuse) as (store, built):
        timed = time_recall(store, asked, progress=progress)
    return {"capsules": capsules, **built, "queries": len(asked), **timed}


@contextmanager
def _scale_log(capsules: int, locomo: Path, reuse: bool):  # type: ignore[no-untyped-def]
    """The open scale log and the facts of its build: a fresh one in a temporary folder, or
    with `reuse` the cached one (built into the cache first when absent)."""
    if not reuse:
        with tempfile.TemporaryDirectory(prefix="capy-bench-scale-") as folder:
            store, built = scale_store(Path(folder), capsules, locomo)
            with store:
                yield store, {**built, "reused": False}
        return
    from capy.bench.recall import fresh_store
    from capy.rules import load_rules

    rules = load_rules()
    folder = _cache_folder() / _cache_key(capsules, locomo, rules)
    reused = (folder / "done.json").is_file()
    if not reused:
        _build_into(folder, capsules, locomo)
    built = json.loads((folder / "done.json").read_text(encoding="utf-8"))
    secret = bytes.fromhex((folder / "key").read_text(encoding="utf-8").strip())
    store = fresh_store(folder / "scale.db", rules, secret)
    with store:
        yield store, {**built, "reused": reused}


def _build_into(folder: Path, capsules: int, locomo: Path) -> None:
    """Build the scale log in a work folder beside `folder`, then move it into place whole: an
    interrupted build leaves nothing a later run would take for a finished one."""
    import secrets

    folder.parent.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(folder, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=".building-", dir=folder.parent))
    try:
        secret = secrets.token_bytes(32)
        store, built = scale_store(work, capsules, locomo, secret)
        with store:
            store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (work / "capsules.jsonl").unlink(missing_ok=True)
        key_file = work / "key"
        key_file.write_text(secret.hex(), encoding="utf-8")
        key_file.chmod(0o600)
        (work / "done.json").write_text(json.dumps(built), encoding="utf-8")
        work.rename(folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _cache_folder() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "capy-bench" / "recall-scale"


def _cache_key(capsules: int, locomo: Path, rules: Any) -> str:
    import importlib

    from capy.capsules.sqlite.schema import MIGRATIONS
    from capy.digests import sha256
    from capy.rules.hashing import pack_fingerprint

    shaping = sorted({p for s in rules.view("capsules").live_stages for p in s.shaped_by})
    packs = []
    for name in shaping:
        fingerprint = pack_fingerprint(rules.packs[name])
        if name == "capsules":
            body = {k: v for k, v in fingerprint["body"].items() if k != "recall"}
            fingerprint = {**fingerprint, "body": body}
        packs.append(fingerprint)
    models = _scale_model_ids()
    sources = [
        Path(importlib.import_module(name).__file__ or "").read_text(encoding="utf-8")
        for name in _SHAPING_MODULES
    ]
    parts = [
        f"format {SCALE_FORMAT} capsules {capsules} models {models}",
        sha256(locomo.read_bytes()).hexdigest(),
        json.dumps(packs, sort_keys=True, default=str),
        *(migration.name for migration in MIGRATIONS),
        *sources,
    ]
    return sha256("\n".join(parts).encode()).hexdigest()[:24]


def _scale_model_ids() -> list[str]:
    """The embedder the build would use (its vectors are in the log), none without one."""
    from capy.capsules.recall.lists import find_vector_search
    from capy.capsules.stages.embed import find_embedder

    if find_vector_search() is None:
        return []
    embedder = find_embedder()
    return [] if embedder is None else [embedder.model_id]


def scale_store(folder: Path, capsules: int, locomo: Path, secret: bytes | None = None):  # type: ignore[no-untyped-def]
    """A log of `capsules` LoCoMo turns (repeated as further sessions), drained by the pipeline
    as a user's drain runs it (every stage, in batches); the open store and the seconds of
    each step. The embed stage runs only when recall has a vector list to read its rows
    (without one, its vectors would serve nothing); the scale set repeats the same turns, so
    their vectors come from the benchmarks' vector cache after the first of each."""
    from capy.bench.capsules_import import jsonl_lines, load_turns
    from capy.bench.recall import fresh_store
    from capy.capsules.importing import import_path
    from capy.capsules.pipeline.worker import Worker
    from capy.rules import load_rules

    turns = load_turns(locomo)
    source = folder / "capsules.jsonl"
    lines = (line.replace('"locomo/', '"scale/') for line in jsonl_lines(turns, capsules))
    source.write_text("".join(line + "\n" for line in lines), "utf-8")
    store = fresh_store(folder / "scale.db", load_rules(), secret)
    # A throw-away log: waiting for the disk at each commit measures nothing recall does.
    store.conn.execute("PRAGMA synchronous = OFF")
    models = _scale_models(store)
    live = [stage.name for stage in store.rules.view("capsules").live_stages]
    stages = live if models.embedder is not None else [s for s in live if s != EMBED]
    started = time.perf_counter()
    import_path(store, source)
    imported = time.perf_counter()
    report = Worker(store, models=models).drain(stages)
    drained = time.perf_counter()
    scopes = {scope.project for scope in store.backend.scopes()}
    return store, {
        "scopes": len(scopes),
        "stages": stages,
        "jobs": report.total_done,
        "import_seconds": round(imported - started, 1),
        "drain_seconds": round(drained - imported, 1),
    }


def _scale_models(store):  # type: ignore[no-untyped-def]
    """The run's models, the embedder behind the benchmarks' vector cache; none when recall
    has no vector list to read what it embeds."""
    from capy.bench.vector_cache import CachedEmbedder
    from capy.capsules.pipeline.versions import RunModels, find_models
    from capy.capsules.recall.lists import find_vector_search

    found = find_models(store)
    if found.embedder is None or find_vector_search() is None:
        return RunModels(llm=found.llm)
    return RunModels(llm=found.llm, embedder=CachedEmbedder(found.embedder))


def time_recall(store, asked: list[str], *, progress: Progress | None = None) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    """Recall each question over every scope; p50 and p95 in milliseconds, of wall time (the
    goal) and of the process's CPU time (what a busy machine does not inflate), and where the
    rest of the wall time went: the recalling thread waiting for a CPU (the run queue of a busy
    machine), and the time it slept (disk, locks, the query's embedding on its own thread)."""
    from capy.capsules.recall import recall

    seconds, cpu, queued, slept, unqueued = [], [], [], [], []
    for number, question in enumerate(asked, 1):
        sched = _thread_schedule()
        began, cpu_began = time.perf_counter(), time.process_time()
        recall(store, question, scope="all")
        wall = (time.perf_counter() - began) * 1000
        seconds.append(wall)
        cpu.append((time.process_time() - cpu_began) * 1000)
        after = _thread_schedule()
        if sched is not None and after is not None:
            ran, waited = after[0] - sched[0], after[1] - sched[1]
            queued.append(waited)
            unqueued.append(wall - waited)
            slept.append(max(wall - ran - waited, 0.0))
        if progress is not None and number % 20 == 0:
            progress("recall at scale", number, len(asked))
    return {
        # The first recall of a process also loads the log's vectors (capy.semantic).
        "first_ms": round(seconds[0], 1) if seconds else None,
        "p50_ms": round(percentile(seconds, 0.5), 1),
        "p95_ms": round(percentile(seconds, 0.95), 1),
        "cpu_p50_ms": _later_percentile(cpu, 0.5),
        "cpu_p95_ms": _later_percentile(cpu, 0.95),
        "queued_p50_ms": _later_percentile(queued, 0.5),
        "queued_p95_ms": _later_percentile(queued, 0.95),
        "slept_p50_ms": _later_percentile(slept, 0.5),
        "slept_p95_ms": _later_percentile(slept, 0.95),
        # What a recall took less its wait for a CPU: its time on a machine with one free.
        "unqueued_p95_ms": _later_percentile(unqueued, 0.95),
        "goal_ms": SCALE_GOAL_MS,
        "met": percentile(seconds, 0.95) < SCALE_GOAL_MS,
    }


def _later_percentile(values: list[float], share: float) -> float | None:
    """The percentile of the recalls after the first (which loads the vectors)."""
    return round(percentile(values[1:], share), 1) if len(values) > 1 else None


def _thread_schedule() -> tuple[float, float] | None:
    """(ms on a CPU, ms runnable but waiting for one) of the calling thread so far, from
    Linux's /proc/thread-self/schedstat; None where the kernel does not keep it."""
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as stats:
            ran, waited = stats.read().split()[:2]
        return int(ran) / 1e6, int(waited) / 1e6
    except (OSError, ValueError):
        return None
