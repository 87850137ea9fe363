"""A bounded approximate vector search, held in memory only: past the search pack's exact size,
each vector is also kept as its signs (one bit per dimension, 48 bytes for 384 dimensions), the
query's signs are compared with every row's by Hamming distance, and only the `rescore` rows
nearest by that count are scored exactly, from the float16 vectors.

Nothing is written anywhere: the bits are derived from the vectors read out of the encrypted
store and live as long as the matrix they came from (the ANN libraries that answer faster
write their index to disk unencrypted). The cost per query is a few passes over 48 bytes a
row instead of a product over 768, and the result is exact for every row the prefilter keeps.
"""

from __future__ import annotations

from typing import Any

_BLOCK = 65_536  # rows turned into bits at once (bounds the temporary boolean array)


def sign_bits(vectors: Any) -> Any:
    """Each row's signs packed into 64-bit words, laid out word by word (words, rows), so that
    every pass of the distance runs over one contiguous array."""
    import numpy as np

    rows, dims = vectors.shape
    words = -(-dims // 64)
    packed = np.zeros((rows, words * 8), dtype=np.uint8)
    for start in range(0, rows, _BLOCK):
        block = vectors[start : start + _BLOCK] > 0
        packed[start : start + len(block), : -(-dims // 8)] = np.packbits(block, axis=1)
    return np.ascontiguousarray(packed.view(np.uint64).T)


def query_bits(query_vector: Any) -> Any:
    import numpy as np

    dims = len(query_vector)
    packed = np.zeros(-(-dims // 64) * 8, dtype=np.uint8)
    packed[: -(-dims // 8)] = np.packbits(query_vector > 0)
    return packed.view(np.uint64)


def nearest_rows(bits: Any, query_vector: Any, count: int, allowed: Any = None) -> Any:
    """Indices of (at least, on ties) the `count` rows whose signs differ least from the
    query's, among the `allowed` rows (a boolean mask; None: every row)."""
    import numpy as np

    wanted = query_bits(query_vector)
    distance = np.bitwise_count(bits[0] ^ wanted[0]).astype(np.uint16)
    for word in range(1, len(wanted)):
        distance += np.bitwise_count(bits[word] ^ wanted[word])
    if allowed is not None:
        distance[~allowed] = np.iinfo(np.uint16).max
    # The distance is a small integer: the count of rows at each distance gives the cut-off
    # directly, cheaper than a partition of every row; ties at the cut-off fill what is left.
    most = len(wanted) * 64
    counts = np.cumsum(np.bincount(distance, minlength=most + 1)[: most + 1])
    count = min(count, int(counts[-1]))
    if count < 1:
        return np.zeros(0, dtype=np.int64)
    cut = int(np.searchsorted(counts, count))
    below = np.flatnonzero(distance < cut)
    at_cut = np.flatnonzero(distance == cut)[: count - len(below)]
    return np.concatenate((below, at_cut))
