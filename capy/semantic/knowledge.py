"""Vectors of the knowledge base: the backlog, embedding it in paced batches, and exact search.

The backlog is every source of an embedded kind (the semantic pack's `embedding.kinds`, durable
by default) that is chunked and has no `source_vectors` row for the current model; new content,
new chunking and a model change all put a source back in it (see migration 0008). Embedding a
source replaces its vectors and records it in one short transaction, so an interrupted run
resumes where it stopped.

Search over these vectors is in capy.semantic.vector_search.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
    # The parents' column naming their content type, which selects the semantic pack's `unseen`
    # rules (None: rows are read as stored).
    content_type: str | None


KNOWLEDGE = Layout(
    "sources",
    "chunk_count",
    "chunks",
    "title, content",
    "chunk_vectors",
    "source_vectors",
    True,
    "content_type",
)
VAULT = Layout(
    "sessions",
    "message_count",
    "messages",
    "title, body",
    "message_vectors",
    "session_vectors",
    False,
    # A message has no content type: a tool result is a log, code or JSON as often as
    # markdown, and the markup rules would strip lines of those (`[INFO]: started`).
    None,
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
    # A chunk's text as the model reads it, given its content type: less the markup no reader
    # sees (None: as stored).
    readable: Callable[[str, str | None], str] | None = None
    # The most characters the pieces can hold (None: no bound): a longer text (a vault message
    # is a whole tool result) is cut before the unseen rules and the tokenizer scan it.
    chars: int | None = None

    def cut(
        self,
        embedder: Any,
        title: str | None,
        content: str | None,
        content_type: str | None = None,
    ) -> list[str]:
        """The model inputs of one chunk of this content type (see the embedder's `windows`)."""
        text = (content or "")[: self.chars]
        if self.readable is not None:
            text = self.readable(text, content_type)
        return embedder.windows(title or "", text, self.stride, self.most, self.size)


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
        settings.without_unseen if settings.unseen else None,
        settings.readable_chars(model),
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
    typed = layout.content_type or "NULL"  # read with the version: one lookup of the parent
    row = conn.execute(
        f"SELECT index_version, {typed} FROM {layout.parents} WHERE id = ?", (source_id,)
    ).fetchone()
    if row is None:
        return 0  # deleted since the backlog was read
    version, content_type = row
    chunks = conn.execute(
        f"SELECT rowid, {layout.text} FROM {layout.rows} WHERE rowid BETWEEN ? AND ? "
        "ORDER BY rowid",
        (first, last),
    ).fetchall()
    parts = [
        (rowid, part, text)
        for rowid, title, content in chunks
        for part, text in enumerate(pieces.cut(embedder, title, content, content_type))
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
        if current != (version,):
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
            (source_id, pieces.version, version, len(parts)),
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


def vector_count(conn: Any, model_id: str, layout: Layout = KNOWLEDGE) -> int:
    return conn.execute(
        f"SELECT coalesce(sum(chunks), 0) FROM {layout.done} WHERE model = ?", (model_id,)
    ).fetchone()[0]
