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
    bits: Any  # np.ndarray uint8 (rows, ceil(dims / 8)): packed signs of the centred rows

    def nearest_rows(self, query_vector: Any, count: int) -> Any:
        """Indices of the `count` rows nearest `query_vector` in bits (unordered)."""
        import numpy as np

        rows = len(self.bits)
        if count >= rows:
            return np.arange(rows)
        wanted = np.packbits(query_vector - self.mean > 0)
        distance = _popcount(np.bitwise_xor(self.bits, wanted))
        return np.argpartition(distance, count)[:count]


def sign_bits(vectors: Any) -> SignBits:
    """The sign bits of `vectors` (float32 rows) around their mean."""
    import numpy as np

    mean = vectors.mean(axis=0, dtype=np.float64).astype(np.float32)
    bits = np.packbits(vectors > mean, axis=1) if len(vectors) else np.zeros((0, 0), np.uint8)
    return SignBits(mean, bits)


def _popcount(xored: Any) -> Any:
    """Set bits per row of a uint8 matrix, as uint16."""
    import numpy as np

    if len(xored) == 0:
        return np.zeros(0, dtype=np.uint16)
    width = xored.shape[1]
    if hasattr(np, "bitwise_count"):
        if width % 8 == 0:  # eight bytes at a time: one count per machine word
            xored = np.ascontiguousarray(xored).view(np.uint64)
        return np.bitwise_count(xored).sum(axis=1, dtype=np.uint16)
    global _POPCOUNT
    if _POPCOUNT is None:
        _POPCOUNT = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).sum(1)
    return _POPCOUNT[xored].sum(axis=1, dtype=np.uint16)
