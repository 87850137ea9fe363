"""Verbatim files at the blob seam: zstd-compressed, deduplicated by the SHA-256 of their
uncompressed bytes, with the encoding named per row (the stored bytes never decide it).

A blob is verified on the way out: decoding that yields bytes of another size or hash is a
`CorruptBlobError`, never silently wrong output.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import sqlcipher3
import zstandard

from capy.store.codec import COMPRESSION_LEVEL
from capy.vault.errors import CorruptBlobError

ZSTD = "zstd"
IDENTITY = "identity"  # kept as is: when compressing would not make it smaller


def _zstd_decode(data: bytes) -> bytes:
    return zstandard.ZstdDecompressor().decompress(data)


_DECODERS: dict[str, Callable[[bytes], bytes]] = {ZSTD: _zstd_decode, IDENTITY: bytes}


@dataclass(frozen=True)
class Blob:
    hash: str
    size: int
    encoding: str
    data: bytes  # as stored


def content_hash(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def encode_blob(raw: bytes) -> Blob:
    """zstd at the library's default level, unless that would not save a byte."""
    packed = zstandard.ZstdCompressor(level=COMPRESSION_LEVEL).compress(raw)
    encoding, data = (ZSTD, packed) if len(packed) < len(raw) else (IDENTITY, raw)
    return Blob(content_hash(raw), len(raw), encoding, data)


def decode_blob(blob: Blob) -> bytes:
    decoder = _DECODERS.get(blob.encoding)
    if decoder is None:
        raise CorruptBlobError(
            f"blob {blob.hash[:12]} is stored with encoding {blob.encoding!r}, which this capy "
            "does not know; upgrade capy to read it"
        )
    try:
        raw = decoder(blob.data)
    except zstandard.ZstdError:
        raw = None
    if raw is None or len(raw) != blob.size or content_hash(raw) != blob.hash:
        raise CorruptBlobError(
            f"blob {blob.hash[:12]} no longer matches its hash; restore the vault from a backup "
            "or import the session again from its original file"
        )
    return raw


def store_blob(conn: sqlcipher3.Connection, raw: bytes) -> tuple[str, bool]:
    """Keep `raw` once; return its hash and whether it was new. Call inside a transaction."""
    digest = content_hash(raw)
    if conn.execute("SELECT 1 FROM blobs WHERE hash = ?", (digest,)).fetchone():
        return digest, False
    blob = encode_blob(raw)
    conn.execute(
        "INSERT INTO blobs (hash, size, encoding, data) VALUES (?, ?, ?, ?)",
        (blob.hash, blob.size, blob.encoding, blob.data),
    )
    return digest, True


def load_blob(conn: sqlcipher3.Connection, digest: str) -> bytes:
    row = conn.execute(
        "SELECT hash, size, encoding, data FROM blobs WHERE hash = ?", (digest,)
    ).fetchone()
    if row is None:
        raise CorruptBlobError(
            f"blob {digest[:12]} is missing from the vault; import the session again from its "
            "original file, or restore the vault from a backup"
        )
    return decode_blob(Blob(*row))


def drop_unreferenced(conn: sqlcipher3.Connection, hashes: list[str]) -> None:
    """Remove those of `hashes` no session refers to any more (a session replaced by a larger
    copy of itself leaves its old files behind)."""
    conn.executemany(
        "DELETE FROM blobs WHERE hash = ? AND NOT EXISTS "
        "(SELECT 1 FROM session_files WHERE blob_hash = ?)",
        [(digest, digest) for digest in hashes],
    )
