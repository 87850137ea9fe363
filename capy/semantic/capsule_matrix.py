"""The capsule log's vectors of one model, held in memory between recalls.

Reading and decoding every vector for each query cost more than the rest of recall at scale
(100,000 capsules: about 77 MB of float16 to decrypt per query). A process keeps the matrix
of each log it recalls from and reloads it only when the log's count of vector writes (a
trigger keeps it) moved. Rows are grouped by capsule, so a capsule scores as its best chunk in
one `np.maximum.reduceat`.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any

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

    def best(self, query_vector: Any) -> Any:
        """Each capsule's best chunk similarity to `query_vector`, in `numbers` order."""
        import numpy as np

        return np.maximum.reduceat(self.vectors @ query_vector, self.starts)


def capsule_matrix(conn: Any, model: str, dims: int) -> VectorMatrix | None:
    """The current vectors of `model` in the log `conn` opened (None: there are none)."""
    from capy.capsules.sqlite.vectors import vector_changes

    changes = vector_changes(conn)
    key = _log_key(conn, model)
    held = _held.get(key) if key is not None else None
    if held is not None and changes and held.changes == changes:
        return held
    loaded = _load(conn, model, dims, changes)
    if key is not None and changes:
        with _lock:
            _held.pop(key, None)
            while len(_held) >= _KEEP:
                _held.pop(next(iter(_held)))
            _held[key] = loaded
    return loaded if len(loaded.numbers) else None


def _load(conn: Any, model: str, dims: int, changes: str) -> VectorMatrix:
    import numpy as np

    from capy.capsules.sqlite.vectors import model_vectors
    from capy.semantic.embedder import decode

    rows = model_vectors(conn, model)
    numbers = np.array([n for n, _ in rows], dtype=np.int64)
    vectors = decode([blob for _, blob in rows], dims).astype(np.float32)
    starts = np.flatnonzero(np.r_[True, numbers[1:] != numbers[:-1]]) if len(rows) else numbers
    return VectorMatrix(changes, numbers[starts], starts, vectors)


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
