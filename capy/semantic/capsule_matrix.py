"""The capsule log's vectors of one model, held in memory between recalls.

Reading and decoding every vector for each query cost more than the rest of recall at scale
(100,000 capsules: about 77 MB of float16 to decrypt per query). A process keeps the matrix
of each log it recalls from and reloads it only when the log's count of vector writes (a
trigger keeps it) moved. Rows are grouped by capsule, so a capsule scores as its best chunk in
one `np.maximum.reduceat`.

Past `exact_rows` rows, a query scores only the rows its sign bits find nearest
(`capy.semantic.shortlist`), a bounded share of the matrix. Products are `np.einsum`, not `@`:
for one query vector BLAS starts a thread per core, and on a busy machine waiting for them cost
20 ms where the product itself takes under 1 ms (2,000 rows; 87 ms against 38 ms at 100,000).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capy.semantic.shortlist import SignBits

# Logs held at once: a server recalls from one project's log, a benchmark from a few.
_KEEP = 2
_lock = threading.Lock()
_held: dict[tuple[str, int, str], VectorMatrix] = {}


@dataclass(frozen=True)
class VectorMatrix:
    changes: str  # the log's vector write count when loaded
    numbers: Any  # np.ndarray of capsule numbers, ascending, one per capsule
    starts: Any  # np.ndarray: each capsule's first row in `vectors`
    vectors: Any  # np.ndarray float32, one row per chunk
    owners: Any = None  # np.ndarray: each row's capsule, as an index into `numbers`
    signs: SignBits | None = None  # the rows' sign bits, past `exact_rows` rows only

    def best(self, query_vector: Any, shortlist_rows: int = 0) -> tuple[Any, Any]:
        """(capsule numbers, each one's best chunk similarity to `query_vector`): every
        capsule, or with sign bits only those owning one of the `shortlist_rows` rows nearest
        in bits."""
        import numpy as np

        if self.signs is None or not 0 < shortlist_rows < len(self.vectors):
            scores = np.einsum("ij,j->i", self.vectors, query_vector)
            return self.numbers, np.maximum.reduceat(scores, self.starts)
        rows = np.sort(self.signs.nearest_rows(query_vector, shortlist_rows))
        scores = np.einsum("ij,j->i", self.vectors[rows], query_vector)
        owners = self.owners[rows]
        firsts = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])
        return self.numbers[owners[firsts]], np.maximum.reduceat(scores, firsts)


def capsule_matrix(conn: Any, model: str, dims: int, exact_rows: int = 0) -> VectorMatrix | None:
    """The current vectors of `model` in the log `conn` opened (None: there are none), with
    sign bits when there are more than `exact_rows` rows (0: never)."""
    from capy.capsules.sqlite.vectors import vector_changes

    changes = vector_changes(conn)
    key = _log_key(conn, model)
    held = _held.get(key) if key is not None else None
    if held is not None and changes and held.changes == changes and _fits(held, exact_rows):
        return held
    loaded = _load(conn, model, dims, changes, exact_rows)
    if key is not None and changes:
        with _lock:
            _held.pop(key, None)
            while len(_held) >= _KEEP:
                _held.pop(next(iter(_held)))
            _held[key] = loaded
    return loaded if len(loaded.numbers) else None


def _fits(held: VectorMatrix, exact_rows: int) -> bool:
    """Whether `held` has sign bits exactly when `exact_rows` asks for them."""
    wanted = 0 < exact_rows < len(held.vectors)
    return (held.signs is not None) == wanted


def _load(conn: Any, model: str, dims: int, changes: str, exact_rows: int) -> VectorMatrix:
    import numpy as np

    from capy.capsules.sqlite.vectors import model_vectors
    from capy.semantic.embedder import decode
    from capy.semantic.shortlist import sign_bits

    rows = model_vectors(conn, model)
    numbers = np.array([n for n, _ in rows], dtype=np.int64)
    vectors = decode([blob for _, blob in rows], dims).astype(np.float32)
    starts = np.flatnonzero(np.r_[True, numbers[1:] != numbers[:-1]]) if len(rows) else numbers
    owners = np.cumsum(np.r_[False, numbers[1:] != numbers[:-1]]) if len(rows) else numbers
    signs = sign_bits(vectors) if 0 < exact_rows < len(vectors) else None
    return VectorMatrix(changes, numbers[starts], starts, vectors, owners, signs)


def _log_key(conn: Any, model: str) -> tuple[str, int, str] | None:
    """The log's file and inode (a log made again at the same path is another log)."""
    row = conn.execute("PRAGMA database_list").fetchone()
    path = str(row[2]) if row is not None else ""
    if not path:
        return None  # an in-memory database: nothing to tell it by
    try:
        return path, os.stat(path).st_ino, model
    except OSError:
        return None
