"""A compiled-rules cache on disk, so a fresh process (every hook is one) skips parse and schema.

Validating the packs costs around a second; reading their merged result back as JSON costs a
few milliseconds. The cache key is a hash of capy's version and the bytes of every file that
goes into the result (shipped packs, schemas, overlays), so any edit anywhere is a miss. Only a
rule set without errors is ever written, and a cache file that cannot be read is ignored.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from capy import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# 2: project overlays are judged (project_limits) and what was ignored is kept with the packs;
# a format-1 entry may hold a loosening project overlay, so it must never be read again.
CACHE_FORMAT = 2


# A long-lived process (the server) asks for the key on every tool call; hashing every pack,
# schema and overlay each time cost a few milliseconds a call. The key is kept per process
# while every file keeps its inode, size, mtime and ctime (ctime: a chmod that makes an
# unreadable overlay readable changes the key too).
_KEY_MEMO: dict[tuple, str] = {}
_KEY_MEMO_SIZE = 16


def cache_key(overlays: list[tuple[Path, str]]) -> str:
    from capy.rules.resources import shipped_pack_files, shipped_schema_files

    shipped = [*shipped_pack_files(), *shipped_schema_files()]
    stamp = tuple(
        (origin, str(path), file_stamp(str(path)))
        for path, origin in [*((entry, "shipped") for entry in shipped), *overlays]
    )
    # A file that cannot be stat'ed (gone, or inside a zip) gives no stamp to trust: hash it.
    trusted = all(item[2] is not None for item in stamp[: len(shipped)])
    key = _KEY_MEMO.get(stamp) if trusted else None
    if key is None:
        key = _hashed_key(shipped, overlays)
        if trusted:
            if len(_KEY_MEMO) >= _KEY_MEMO_SIZE:
                _KEY_MEMO.pop(next(iter(_KEY_MEMO)))
            _KEY_MEMO[stamp] = key
    return key


def file_stamp(path: str) -> tuple[int, int, int, int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


def _hashed_key(shipped: list[Any], overlays: list[tuple[Path, str]]) -> str:
    # Imported here: a warm CLI start reads an entry by a key it was given, and needs neither.
    import hashlib

    digest = hashlib.sha256(f"capy {__version__} cache {CACHE_FORMAT}\n".encode())
    for entry in shipped:
        digest.update(entry.name.encode() + b"\0" + entry.read_bytes() + b"\0")
    for path, origin in overlays:
        try:
            content = path.read_bytes()
        except OSError:
            content = b"<unreadable>"
        digest.update(f"{origin}:{path}".encode() + b"\0" + content + b"\0")
    return digest.hexdigest()


def cache_path(key: str) -> Path:
    from capy.config.paths import data_dir

    return data_dir() / "cache" / "rules" / f"{key[:32]}.json"


def read_cache(key: str) -> dict[str, Any] | None:
    try:
        payload = json.loads(cache_path(key).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(payload, dict) or payload.get("key") != key:
        return None
    return payload


def write_cache(key: str, packs: dict[str, Any], ignored: Sequence[dict[str, Any]] = ()) -> None:
    """Best effort and atomic: a read-only home or a full disk only costs speed."""
    from capy.atomicfile import write_atomically

    path = cache_path(key)
    payload = {"key": key, "packs": packs, "ignored": list(ignored)}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, json.dumps(payload, ensure_ascii=False).encode())
    except OSError:
        return
    _prune(path)


def _prune(keep: Path, limit: int = 8) -> None:
    """Keep the newest few entries: each edit of an overlay leaves an old one behind."""
    try:
        entries = sorted(keep.parent.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        for stale in entries[limit:]:
            stale.unlink(missing_ok=True)
    except OSError:
        return
