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
        numbers, scores = matrix.best(np.array([0, 1, 0, 0], dtype=np.float32))
        assert list(numbers) == [first, second] and list(scores) == [1.0, 0.0]
        assert capsule_matrix(store.conn, MODEL, DIMS) is matrix  # nothing changed: held

        _write(store.conn, third, _vector(0, 0, 0, 1))
        grown = capsule_matrix(store.conn, MODEL, DIMS)
        assert grown is not matrix and list(grown.numbers) == [first, second, third]

        with transaction(store.conn):
            clear_vectors(store.conn, first, MODEL)
        shrunk = capsule_matrix(store.conn, MODEL, DIMS)
        assert list(shrunk.numbers) == [second, third]
        assert capsule_matrix(store.conn, "another-model", DIMS) is None


def test_past_exact_rows_a_query_scores_only_its_sign_bit_shortlist(project_dir) -> None:
    """Past `exact_rows`, the matrix keeps sign bits and a query scores only the rows nearest in
    bits: the nearest capsules by cosine are among them, and each still scores as its best chunk
    of those rows."""
    from capy.semantic.capsule_matrix import capsule_matrix

    rng = np.random.default_rng(7)
    dims = 32
    rows = rng.standard_normal((300, dims)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    with open_capsules(project_dir=project_dir) as store:
        written = store.write(
            [CapsuleDraft(kind="note", content=f"note {i}", source="cli") for i in range(150)]
        )
        with transaction(store.conn):
            for index, item in enumerate(written):  # two chunks per capsule
                pair = [
                    rows[2 * index].astype("<f2").tobytes(),
                    rows[2 * index + 1].astype("<f2").tobytes(),
                ]
                write_vectors(store.conn, item.n, list(enumerate(pair)), MODEL, dims, "v1")
        exact = capsule_matrix(store.conn, MODEL, dims)
        assert exact is not None and exact.signs is None
        bounded = capsule_matrix(store.conn, MODEL, dims, exact_rows=100)
        assert bounded is not None and bounded.signs is not None and bounded is not exact
        assert capsule_matrix(store.conn, MODEL, dims, exact_rows=100) is bounded  # held
        query = rows[10] + 0.1 * rows[200]
        all_numbers, all_scores = exact.best(query)
        numbers, scores = bounded.best(query, shortlist_rows=60)
        assert 0 < len(numbers) <= 60
        best = {int(n): float(s) for n, s in zip(all_numbers, all_scores, strict=True)}
        mine = {int(n): float(s) for n, s in zip(numbers, scores, strict=True)}
        top = sorted(best, key=lambda n: -best[n])[:3]
        assert all(n in mine for n in top)
        for n in top:  # a shortlisted capsule's best chunk is its best chunk overall here
            assert mine[n] == pytest.approx(best[n], abs=1e-6)
        assert set(mine) <= set(best)
        numbers, _ = bounded.best(query, shortlist_rows=1000)  # more than there are: every one
        assert list(numbers) == list(all_numbers)
