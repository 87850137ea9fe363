"""One segment: a scope's capsules of one closed day, as zstd-compressed canonical JSON lines.

A line is the capsule's body (what its id hashes) plus its place in the chain (`seq`,
`prev_hash`, `chain_hash`) and, for an erased capsule, `forgotten_reason`; anyone can recompute
each id and each link from the lines alone. The archive beside the database seals segments with
AES-256-GCM under a key derived from the database's (`SealingKey`); an export writes them plain.

A segment file is written once: to a private temporary file, fsync'd, renamed into place, and
the folder fsync'd, so a crash leaves either no segment or a whole one, never a partial file.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import zstandard

from capy.atomicfile import sync_folder, unlink_quietly, write_atomically, written_temporary
from capy.canonical import canonical_json
from capy.capsules.chain import link_hash
from capy.capsules.model import Capsule, CapsuleError, Scope, capsule_id

NONCE_BYTES = 12
ZSTD_LEVEL = 9  # written once, read rarely: a smaller file is worth the extra milliseconds
PLAIN_SUFFIX = ".jsonl.zst"
SEALED_SUFFIX = ".jsonl.zst.sealed"


def record_problem(capsule: Capsule) -> str | None:
    """Why this line cannot be the capsule it names, or None when it is."""
    if capsule.chain_hash != link_hash(capsule.prev_hash, capsule.id):
        return f"capsule {capsule.id[:12]} has a wrong chain hash"
    if not capsule.forgotten and capsule_id(capsule.body()) != capsule.id:
        return f"capsule {capsule.id[:12]} does not match its id"
    return None


class SealingKey:
    """AES-256-GCM for the local archive's segments; the segment's file name is the associated
    data, so a sealed segment cannot be passed off under another name."""

    def __init__(self, raw: bytes) -> None:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        self._aead = AESGCM(raw)

    def seal(self, data: bytes, name: str) -> bytes:
        nonce = secrets.token_bytes(NONCE_BYTES)
        return nonce + self._aead.encrypt(nonce, data, name.encode("utf-8"))

    def open(self, data: bytes, name: str) -> bytes:
        from cryptography.exceptions import InvalidTag

        try:
            return self._aead.decrypt(data[:NONCE_BYTES], data[NONCE_BYTES:], name.encode())
        except (InvalidTag, ValueError):
            raise CapsuleError(
                f"segment {name} was altered or sealed with another key: restore it from a "
                "backup, or import from an export of the machine that sealed it"
            ) from None


def encode_segment(capsules: Iterable[Capsule]) -> bytes:
    text = "".join(canonical_json(capsule.record()) + "\n" for capsule in capsules)
    return zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(text.encode("utf-8"))


def decode_segment(data: bytes, name: str) -> list[Capsule]:
    """The records of a segment's (opened) bytes; a `CapsuleError` naming the segment when the
    bytes are not a segment."""
    try:
        text = zstandard.ZstdDecompressor().decompress(data).decode("utf-8")
        return [_record(json.loads(line)) for line in text.splitlines() if line.strip()]
    except (zstandard.ZstdError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        raise CapsuleError(
            f"segment {name} is damaged (not zstd-compressed capsule lines): restore it from "
            "the machine that exported it"
        ) from None


def _record(line: dict[str, Any]) -> Capsule:
    scope = line["scope"]
    if not isinstance(scope, dict) or not isinstance(line["metadata"], dict):
        raise TypeError("scope and metadata are objects")
    return Capsule(
        id=str(line["id"]),
        seq=int(line["seq"]),
        scope=Scope(str(scope["project"]), str(scope["tenant"])),
        source=str(line["source"]),
        kind=str(line["kind"]),
        content=str(line["content"]),
        metadata=line["metadata"],
        created_at=str(line["created_at"]),
        prev_hash=str(line["prev_hash"]),
        chain_hash=str(line["chain_hash"]),
        forgotten_reason=line.get("forgotten_reason"),
    )


def file_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def scope_folder(scope: Scope) -> str:
    """A folder name for a scope: its project is a path, so it is named by a hash of it."""
    return hashlib.sha256(f"{scope.tenant}/{scope.project}".encode()).hexdigest()[:16]


def write_once(path: Path, data: bytes) -> None:
    """Write `path` whole or not at all, on disk; an existing file is never replaced."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = written_temporary(path, data, durable=True)
    try:
        os.link(temporary, path)  # fails if the name is taken: a segment is never rewritten
    finally:
        unlink_quietly(temporary)
    sync_folder(path.parent)


def replace_file(path: Path, data: bytes) -> None:
    """Atomically replace `path` (the manifest, which grows as segments are sealed), on disk."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    write_atomically(path, data, durable=True)
