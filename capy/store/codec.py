"""zstd compression of stored raw content, with one compressor and decompressor per thread.

Building a zstd context costs more than compressing a typical tool output, so contexts are
reused; they are not thread-safe, hence one per thread (the MCP server may index from a pool).
"""

from __future__ import annotations

import threading

import zstandard

# Level 3 is zstd's default: about 3-4x on logs and JSON at hundreds of MB/s, so compression
# never dominates indexing time; higher levels buy little on text this size.
COMPRESSION_LEVEL = 3

_local = threading.local()


def _compressor() -> zstandard.ZstdCompressor:
    compressor = getattr(_local, "compressor", None)
    if compressor is None:
        compressor = _local.compressor = zstandard.ZstdCompressor(level=COMPRESSION_LEVEL)
    return compressor


def _decompressor() -> zstandard.ZstdDecompressor:
    decompressor = getattr(_local, "decompressor", None)
    if decompressor is None:
        decompressor = _local.decompressor = zstandard.ZstdDecompressor()
    return decompressor


def compress_text(text: str) -> bytes:
    return _compressor().compress(text.encode("utf-8"))


def decompress_text(blob: bytes) -> str:
    """The stored text; the frame records its size, so no output bound needs guessing."""
    return _decompressor().decompress(blob).decode("utf-8", errors="replace")
