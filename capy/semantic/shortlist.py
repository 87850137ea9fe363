"""A bounded vector search in memory: the rows whose sign bits are nearest the query's, then
the exact product over those rows only.

An exact product reads every float of every vector for each query (100,000 capsule vectors of
384 dimensions: 154 MB, 15-60 ms on a loaded machine), while the nearest rows are few. Each row
keeps one bit per dimension, whether it lies above the matrix's mean there (48 bytes for 384
dimensions); the Hamming distance between bits follows the angle between the centred vectors,
so the `count` rows nearest in bits hold the nearest rows by cosine with few exceptions, and
their exact cosines decide the order. Nothing is written anywhere: the bits are made when the
matrix is loaded, from the decrypted vectors, and live as long as it does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Bits set in each byte value, for numpy releases without `bitwise_count` (before 2.0).
_POPCOUNT: Any = None


@dataclass(frozen=True)
class SignBits:
    mean: Any  # np.ndarray float32 (dims,): the centre the bits are taken against
    # np.ndarray (words, rows): the packed signs of the centred rows, one machine word (eight
    # bytes, or one byte when the dimensions do not fill words) per row and column. Column
    # by column, each step is one vector operation over every row: summing a (rows, 6) array
    # along its short axis cost six times as much.
    words: Any

    def nearest_rows(self, query_vector: Any, count: int) -> Any:
        """Indices of the `count` rows nearest `query_vector` in bits (unordered)."""
        import numpy as np

        rows = self.words.shape[1] if self.words.ndim == 2 else 0
        if count >= rows:
            return np.arange(rows)
        wanted = _as_words(np.packbits(query_vector - self.mean > 0)[None, :])[:, 0]
        distance = np.zeros(rows, dtype=np.uint16)
        for column, word in zip(self.words, wanted, strict=True):
            distance += _popcount(np.bitwise_xor(column, word))
        return np.argpartition(distance, count)[:count]


def sign_bits(vectors: Any) -> SignBits:
    """The sign bits of `vectors` (float32 rows) around their mean."""
    import numpy as np

    mean = vectors.mean(axis=0, dtype=np.float64).astype(np.float32)
    packed = np.packbits(vectors > mean, axis=1)
    return SignBits(mean, _as_words(packed))


def _as_words(packed: Any) -> Any:
    """(rows, bytes) packed bits as (words, rows): eight bytes a word when they divide."""
    import numpy as np

    packed = np.ascontiguousarray(packed)
    if packed.shape[1] % 8 == 0:
        packed = packed.view(np.uint64)
    return np.ascontiguousarray(packed.T)


def _popcount(words: Any) -> Any:
    """Set bits of each word, as uint16."""
    import numpy as np

    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(words).astype(np.uint16)
    global _POPCOUNT
    if _POPCOUNT is None:
        _POPCOUNT = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).sum(1)
    as_bytes = words.view(np.uint8).reshape(len(words), words.itemsize)
    return _POPCOUNT[as_bytes].sum(axis=1, dtype=np.uint16)
