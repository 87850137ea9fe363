"""Recall's in-memory capsule vectors: loaded once per log, grouped by capsule, and reloaded
whenever the log's vectors change (a trigger counts the writes), so a recall never ranks by
vectors the log no longer holds."""

from __future__ import annotations

import pytest

from capy.capsules import CapsuleDraft, open_capsules
from capy.capsules.sqlite.vectors import clear_vectors, write_vectors
from capy.store.database import transaction

np = pytest.importorskip("numpy", reason="the semantic extra (numpy) is not installed")

MODEL = "test-model"
DIMS = 4


def _vector(*values: float) -> bytes:
    return np.array(values, dtype="<f2").tobytes()


def _write(conn, n: int, *vectors: bytes) -> None:
    with transaction(conn):
        clear_vectors(conn, n, MODEL)
        write_vectors(conn, n, list(enumerate(vectors)), MODEL, DIMS, "v1")


def test_the_matrix_is_held_until_the_vectors_change(project_dir) -> None:
    from capy.semantic.capsule_matrix import capsule_matrix

    with open_capsules(project_dir=project_dir) as store:
        written = store.write(
            [CapsuleDraft(kind="note", content=f"note {i}", source="cli") for i in range(3)]
        )
        first, second, third = (item.n for item in written)
        _write(store.conn, first, _vector(1, 0, 0, 0), _vector(0, 1, 0, 0))
        _write(store.conn, second, _vector(0, 0, 1, 0))
        matrix = capsule_matrix(store.conn, MODEL, DIMS)
        assert matrix is not None and list(matrix.numbers) == [first, second]
        # A capsule scores as its best chunk.
        assert list(matrix.best(np.array([0, 1, 0, 0], dtype=np.float32))) == [1.0, 0.0]
        assert capsule_matrix(store.conn, MODEL, DIMS) is matrix  # nothing changed: held

        _write(store.conn, third, _vector(0, 0, 0, 1))
        grown = capsule_matrix(store.conn, MODEL, DIMS)
        assert grown is not matrix and list(grown.numbers) == [first, second, third]

        with transaction(store.conn):
            clear_vectors(store.conn, first, MODEL)
        shrunk = capsule_matrix(store.conn, MODEL, DIMS)
        assert list(shrunk.numbers) == [second, third]
        assert capsule_matrix(store.conn, "another-model", DIMS) is None
