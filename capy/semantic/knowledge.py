"""Vectors of the knowledge base: the backlog, embedding it in paced batches, and exact search.

The backlog is every source of an embedded kind (the semantic pack's `embedding.kinds`, durable
by default) that is chunked and has no `source_vectors` row for the current model; new content,
new chunking and a model change all put a source back in it (see migration 0008). Embedding a
source replaces its vectors and records it in one short transaction, so an interrupted run
resumes where it stopped.

Search keeps the current model's vectors in memory as one float32 matrix per database file,
read again when `vector_generation` moves, and answers by one matrix-vector product: exact, no
index written to disk, nothing unencrypted at rest.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from capy.store.database import transaction
from capy.store.migrations import chunk_rowid_range

if TYPE_CHECKING:
    from capy.rules import RuleSet
    from capy.rules.views.semantic import EmbeddingModel
    from capy.store import Store


@dataclass(frozen=True)
class Layout:
    """Where a database keeps what gets vectors: parents (sources, vault sessions) whose rows
    (chunks, messages) have rowids `parent id << CHUNK_ORDINAL_BITS | ordinal`, and the two
    vector tables of the same shape (migration 0008 of the knowledge base, 0005 of the vault)."""

    parents: str
    count: str  # the parents' column counting their rows
    rows: str
    text: str  # the rows' title and text columns
    vectors: str
    done: str
    by_kind: bool  # parents have a kind, filtered by the pack's `embedding.kinds`


KNOWLEDGE = Layout(
    "sources", "chunk_count", "chunks", "title, content", "chunk_vectors", "source_vectors", True
)
VAULT = Layout(
    "sessions",
    "message_count",
    "messages",
    "title, body",
    "message_vectors",
    "session_vectors",
    False,
)

# (sources done, sources in all, chunks embedded so far)
Progress = Callable[[int, int, int], None]


@dataclass(frozen=True)
class VectorStatus:
    model: str
    kinds: tuple[str, ...]
    sources: int  # of the embedded kinds, chunked
    embedded: int  # of those, with vectors of the current model
    backlog_chunks: int
    vectors: int  # rows of the current model
    stale_vectors: int  # rows of other models, replaced as their sources are re-embedded

    @property
    def backlog(self) -> int:
        return self.sources - self.embedded


def _kinds_sql(kinds: Sequence[str]) -> str:
    return ", ".join("?" * len(kinds))


def backlog(
    conn: Any, model_id: str, kinds: Sequence[str], layout: Layout = KNOWLEDGE
) -> list[tuple[int, int]]:
    """(source id, chunk count) of the sources waiting for vectors, oldest first."""
    by_kind = f"s.kind IN ({_kinds_sql(kinds)}) AND " if layout.by_kind else ""
    return conn.execute(
        f"""SELECT s.id, s.{layout.count} FROM {layout.parents} AS s
              LEFT JOIN {layout.done} AS v ON v.source_id = s.id AND v.model = ?
             WHERE {by_kind}s.index_version IS NOT NULL
               AND v.source_id IS NULL
             ORDER BY s.id""",
        [model_id, *(kinds if layout.by_kind else ())],
    ).fetchall()


def status(store: Store, version: str, kinds: Sequence[str]) -> VectorStatus:
    conn = store.conn
    sources = conn.execute(
        f"SELECT count(*) FROM sources WHERE kind IN ({_kinds_sql(kinds)}) "
        "AND index_version IS NOT NULL",
        list(kinds),
    ).fetchone()[0]
    waiting = backlog(conn, version, kinds)
    vectors = dict(conn.execute("SELECT model, count(*) FROM chunk_vectors GROUP BY model"))
    current = vectors.pop(version, 0)
    return VectorStatus(
        model=version,
        kinds=tuple(kinds),
        sources=sources,
        embedded=sources - len(waiting),
        backlog_chunks=sum(chunks for _, chunks in waiting),
        vectors=current,
        stale_vectors=sum(vectors.values()),
    )


def embed_backlog(
    store: Store,
    embedder: Any,
    pieces: Pieces,
    kinds: Sequence[str],
    *,
    batch_size: int,
    layout: Layout = KNOWLEDGE,
    cpu_share: float = 1.0,
    deadline: float | None = None,
    stop: threading.Event | None = None,
    progress: Progress | None = None,
    quiet_seconds: float = 0.0,
) -> int:
    """Embed waiting sources until the backlog is empty, `deadline` (monotonic) passes or `stop`
    is set; the number of chunks embedded. Sleeps after each batch to keep to `cpu_share`, and
    (`quiet_seconds` > 0) starts no batch while a tool call of this process runs or has just
    ended (`capy.foreground`)."""
    waiting = backlog(store.conn, pieces.version, kinds, layout)
    done_chunks = 0
    for done, (source_id, _) in enumerate(waiting, start=1):
        if (deadline is not None and time.monotonic() > deadline) or (stop and stop.is_set()):
            break
        done_chunks += _embed_source(
            store, embedder, pieces, source_id, batch_size, cpu_share, stop, quiet_seconds, layout
        )
        if progress:
            progress(done, len(waiting), done_chunks)
    return done_chunks


@dataclass(frozen=True)
class Pieces:
    """How chunks become model inputs: the vector version rows record, and the cutting."""

    version: str
    stride: int
    most: int
    size: int | None = None  # tokens per piece (None: the model's max_tokens)


def pieces_for(rules: RuleSet) -> tuple[EmbeddingModel, Pieces] | None:
    pack = rules.view("semantic")
    model = pack.model()
    if model is None:
        return None
    settings = pack.embedding
    return model, Pieces(
        pack.vector_version(model),
        settings.window_stride,
        settings.max_windows,
        settings.window_tokens,
    )


def _embed_source(
    store: Store,
    embedder: Any,
    pieces: Pieces,
    source_id: int,
    batch_size: int,
    cpu_share: float,
    stop: threading.Event | None,
    quiet_seconds: float = 0.0,
    layout: Layout = KNOWLEDGE,
) -> int:
    from capy.foreground import wait_until_quiet

    conn = store.conn
    first, last = chunk_rowid_range(source_id)
    current_version = f"SELECT index_version FROM {layout.parents} WHERE id = ?"
    row = conn.execute(current_version, (source_id,)).fetchone()
    if row is None:
        return 0  # deleted since the backlog was read
    chunks = conn.execute(
        f"SELECT rowid, {layout.text} FROM {layout.rows} WHERE rowid BETWEEN ? AND ? "
        "ORDER BY rowid",
        (first, last),
    ).fetchall()
    parts = [
        (rowid, part, text)
        for rowid, title, content in chunks
        for part, text in enumerate(
            embedder.windows(title or "", content or "", pieces.stride, pieces.most, pieces.size)
        )
    ]
    vectors: list[bytes] = []
    for start in range(0, len(parts), batch_size):
        wait_until_quiet(quiet_seconds, stop)
        if stop is not None and stop.is_set():
            return 0  # still in the backlog: the next run embeds it whole
        started = time.thread_time()
        vectors += embedder.embed([text for _, _, text in parts[start : start + batch_size]])
        _pace(time.thread_time() - started, cpu_share, stop)
    with transaction(conn):
        current = conn.execute(current_version, (source_id,)).fetchone()
        if current != row:
            return 0  # re-chunked while we embedded: it is back in the backlog
        conn.execute(f"DELETE FROM {layout.vectors} WHERE source_id = ?", (source_id,))
        conn.executemany(
            f"INSERT INTO {layout.vectors} (chunk_id, part, source_id, model, vector) "
            "VALUES (?, ?, ?, ?, ?)",
            [
                (rowid, part, source_id, pieces.version, vector)
                for (rowid, part, _), vector in zip(parts, vectors, strict=True)
            ],
        )
        conn.execute(
            f"INSERT OR REPLACE INTO {layout.done} (source_id, model, index_version, chunks) "
            "VALUES (?, ?, ?, ?)",
            (source_id, pieces.version, row[0], len(parts)),
        )
        _bump(conn)
    return len(chunks)


def _pace(spent: float, cpu_share: float, stop: threading.Event | None) -> None:
    if cpu_share >= 1.0 or spent <= 0:
        return
    rest = spent * (1.0 / cpu_share - 1.0)
    if stop is not None:
        stop.wait(rest)
    else:
        time.sleep(rest)


def _bump(conn: Any) -> None:
    conn.execute(
        "INSERT INTO meta (key, value) VALUES ('vector_generation', '1') ON CONFLICT (key) "
        "DO UPDATE SET value = CAST(value AS INTEGER) + 1"
    )


# --- exact search ---


@dataclass
class _Matrix:
    generation: str | None = None
    model_id: str = ""
    chunk_ids: Any = None  # np.ndarray of int64
    source_ids: Any = None
    vectors: Any = None  # np.ndarray float32 (n, dims), searched exactly
    index: Any = None  # instead, past the exact-search size: a sign_prefilter.SignIndex
    lock: threading.Lock = field(default_factory=threading.Lock)


_matrices: dict[tuple[str, str], _Matrix] = {}


def vector_count(conn: Any, model_id: str, layout: Layout = KNOWLEDGE) -> int:
    return conn.execute(
        f"SELECT coalesce(sum(chunks), 0) FROM {layout.done} WHERE model = ?", (model_id,)
    ).fetchone()[0]


def matrix(
    store: Store,
    model: EmbeddingModel,
    version: str,
    layout: Layout = KNOWLEDGE,
    approximate: bool = False,
) -> _Matrix:
    """The current version's vectors of this database, read again when they changed (or when
    the search they serve changed between exact and approximate)."""
    import numpy as np

    from capy.semantic.embedder import decode
    from capy.semantic import sign_prefilter

    key = (f"{store.path}:{layout.vectors}", version)
    cached = _matrices.setdefault(key, _Matrix())
    generation = store.conn.execute(
        "SELECT value FROM meta WHERE key = 'vector_generation'"
    ).fetchone()
    generation = generation[0] if generation else "0"
    with cached.lock:
        if cached.generation != generation or (cached.index is not None) != approximate:
            cached.vectors = cached.index = None  # the old matrix goes before the new one comes
            rows = store.conn.execute(
                f"SELECT chunk_id, source_id, vector FROM {layout.vectors} WHERE model = ? "
                "ORDER BY chunk_id, part",
                (version,),
            ).fetchall()
            cached.chunk_ids = np.array([row[0] for row in rows], dtype=np.int64)
            cached.source_ids = np.array([row[1] for row in rows], dtype=np.int64)
            vectors = decode([row[2] for row in rows], model.dimensions)
            del rows
            if approximate:
                cached.index = sign_prefilter.build(vectors)
            else:
                cached.vectors = vectors.astype(np.float32)
            cached.generation = generation
        return cached


def nearest_in_store(
    store: Store,
    rules: RuleSet,
    query: str,
    limit: int,
    allowed_sources: Callable[[], Sequence[int]] | None,
    layout: Layout = KNOWLEDGE,
) -> list[tuple[int, float]]:
    """(chunk id, -cosine) of the `limit` nearest chunks, best first (lower is better, as
    bm25); [] when there are no vectors, more than the search pack allows, or nothing in
    scope. Up to `exact_max_vectors` every vector is scored; past it, up to
    `approximate_max_vectors`, only those the sign prefilter keeps. Raises SemanticError when
    the model is missing or altered."""
    import numpy as np

    from capy.semantic import query_vectors
    semantic = rules.view("semantic")
    settings = rules.view("search").vectors
    chosen = pieces_for(rules)
    if chosen is None:
        return []
    model, pieces = chosen
    count = vector_count(store.conn, pieces.version, layout)
    approximate = count > settings.exact_max_vectors
    if count == 0 or (approximate and count > settings.approximate_max_vectors):
        return []
    found = matrix(store, model, pieces.version, layout, approximate)
    rows = found.index if found.index is not None else found.vectors
    if rows is None or len(rows) == 0:
        return []
    query_vector = query_vectors.vector(model, semantic.embedding.threads, query)
    allowed = None if allowed_sources is None else _in_scope(found.source_ids, allowed_sources())
    if found.index is None:
        chunk_ids, scores = found.chunk_ids, found.vectors @ query_vector
        if allowed is not None:
            scores = np.where(allowed, scores, -np.inf)
    else:
        kept = max(settings.depth, round(len(rows) * settings.approximate_rescore_share))
        kept_rows, scores = found.index.scores(query_vector, kept, allowed)
        chunk_ids = found.chunk_ids[kept_rows]
    if len(scores) == 0:
        return []
    # A chunk scores as its best piece: rows are ordered by chunk, so each chunk's pieces
    # are one run, reduced by maximum.
    starts = np.flatnonzero(np.r_[True, chunk_ids[1:] != chunk_ids[:-1]])
    best = np.maximum.reduceat(scores, starts)
    ids = chunk_ids[starts]
    limit = min(limit, len(best))
    top = np.argpartition(-best, limit - 1)[:limit]
    top = top[np.argsort(-best[top], kind="stable")]
    return [
        (int(ids[i]), -float(best[i]))
        for i in top
        if np.isfinite(best[i]) and best[i] >= settings.min_similarity
    ]


def _in_scope(source_ids: Any, allowed: Sequence[int]) -> Any:
    """Which rows belong to an allowed source (None: every row does). Source ids are small
    integers: a lookup table is one gather, where `np.isin` sorts every row."""
    import numpy as np

    table = np.zeros(int(source_ids.max(initial=0)) + 1, dtype=bool)
    chosen = np.fromiter(allowed, dtype=np.int64)
    table[chosen[(chosen >= 0) & (chosen < len(table))]] = True
    mask = table[source_ids]
    return None if mask.all() else mask
