"""Keeping the vault in shape: delete a session, checkpoint the WAL, compact, rotate the key.

Checkpoint and key rotation are the knowledge base's own machinery (`capy.store.maintenance`)
pointed at the vault file; compaction is the vault's: blobs are recompressed at zstd's highest
ordinary level where that saves bytes (each checked against its hash before it replaces the
old bytes), the full-text indexes are merged, then the file is VACUUMed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import zstandard

from capy.store.database import transaction
from capy.vault import Vault
from capy.vault.blobs import ZSTD, Blob, decode_blob, drop_unreferenced
from capy.vault.messages import replace_rows
from capy.vault.restore import find_session

if TYPE_CHECKING:
    from sqlcipher3 import Connection

    from capy.store.maintenance import RekeyOutcome

Progress = Callable[[int, int], None]
# zstd's highest level without the "ultra" window sizes, which make every later read of the
# blob need far more memory; compaction is rare, so its slowness is affordable.
BEST_LEVEL = 19
# Blobs recompressed per transaction: a killed compaction keeps the batches it finished.
COMPACT_BATCH = 50


@dataclass(frozen=True)
class DeletedSession:
    label: str
    files: int
    blobs_dropped: int  # blobs no other session shares


def delete_session(vault: Vault, wanted: str) -> DeletedSession:
    """Remove one session, its message rows (and their vocabulary counts) and unshared blobs."""
    session_rowid, label, _ = find_session(vault, wanted)
    with transaction(vault.conn) as conn:
        hashes = [
            row[0]
            for row in conn.execute(
                "SELECT blob_hash FROM session_files WHERE session = ?", (session_rowid,)
            )
        ]
        replace_rows(conn, session_rowid, [], "")
        conn.execute("DELETE FROM sessions WHERE id = ?", (session_rowid,))  # files cascade
        before = conn.execute("SELECT count(*) FROM blobs").fetchone()[0]
        drop_unreferenced(conn, hashes)
        after = conn.execute("SELECT count(*) FROM blobs").fetchone()[0]
    return DeletedSession(label, len(hashes), before - after)


@dataclass(frozen=True)
class CompactReport:
    blobs: int  # blobs looked at
    recompressed: int  # blobs stored smaller now
    stored_before: int  # bytes of stored blob data
    stored_after: int
    file_before: int  # bytes of the vault file and its WAL
    file_after: int


def compact_vault(vault: Vault, *, progress: Progress | None = None) -> CompactReport:
    from capy.vault.catalog import file_bytes

    file_before = file_bytes(vault)
    hashes = [row[0] for row in vault.conn.execute("SELECT hash FROM blobs ORDER BY hash")]
    stored_before = _stored_bytes(vault)
    compressor = zstandard.ZstdCompressor(level=BEST_LEVEL)
    recompressed = 0
    for start in range(0, len(hashes), COMPACT_BATCH):
        batch = hashes[start : start + COMPACT_BATCH]
        with transaction(vault.conn) as conn:
            for digest in batch:
                recompressed += _recompress(conn, digest, compressor)
        if progress:
            progress(start + len(batch), len(hashes))
    stored_after = _stored_bytes(vault)
    with transaction(vault.conn) as conn:
        # Deleted and replaced rows stay in FTS5's segments as tombstones until merged.
        for table in ("messages", "messages_trigram"):
            conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
    vault.conn.execute("VACUUM")
    vault.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return CompactReport(
        len(hashes), recompressed, stored_before, stored_after, file_before, file_bytes(vault)
    )


def _recompress(conn: Connection, digest: str, compressor: zstandard.ZstdCompressor) -> int:
    row = conn.execute(
        "SELECT hash, size, encoding, data FROM blobs WHERE hash = ?", (digest,)
    ).fetchone()
    if row is None:
        return 0  # deleted meanwhile
    current = Blob(*row)
    raw = decode_blob(current)  # a corrupt blob stops compaction before anything is lost
    candidate = Blob(current.hash, current.size, ZSTD, compressor.compress(raw))
    if len(candidate.data) >= len(current.data):
        return 0
    decode_blob(candidate)  # what is written must read back to the same bytes
    conn.execute(
        "UPDATE blobs SET encoding = ?, data = ? WHERE hash = ?", (ZSTD, candidate.data, digest)
    )
    return 1


def _stored_bytes(vault: Vault) -> int:
    return vault.conn.execute("SELECT coalesce(sum(length(data)), 0) FROM blobs").fetchone()[0]


def rekey_vault(
    path: Path | None = None,
    new_key_text: str | None = None,
    new_key_label: str = "",
    *,
    generate: bool = False,
) -> RekeyOutcome:
    """Re-encrypt the vault under a new key: a copy under the new key is written, verified
    (integrity and row counts) and swapped in; the old file stays as a timestamped backup,
    with the old key file beside it, so nothing is lost whatever step fails."""
    from capy.store.errors import EncryptError
    from capy.store.maintenance import encrypt_store, is_plaintext
    from capy.vault import locate_vault, plaintext_vault_error

    location = locate_vault(path)
    if not location.path.is_file():
        raise EncryptError(f"there is no vault at {location.path}; nothing to rekey")
    if is_plaintext(location.path):
        raise plaintext_vault_error(location.path)
    return encrypt_store(
        location, new_key_text, new_key_label, generate=generate, command="capy vault rekey"
    )
