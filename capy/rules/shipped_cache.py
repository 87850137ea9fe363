"""The shipped packs parsed and schema-checked once per capy version, kept on disk.

Editing an overlay misses the compiled-rules cache (its key covers every file), and the next
process then parses every shipped pack with positions and validates it against its schema: about
nine tenths of a cold build, for files that did not change. This cache keeps the parsed shipped
packs (data and positions) of packs that passed their schema, so such a build parses and checks
only the overlays. It is keyed by capy's version and the bytes of every shipped pack and schema;
an entry that cannot be read, or holds anything unexpected, is ignored.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from capy import __version__
from capy.rules.positions import Loaded, PathKey, Position

CACHE_FORMAT = 1
KEEP_ENTRIES = 4


def shipped_key(texts: dict[str, str], schema_bytes: list[tuple[str, bytes]]) -> str:
    digest = hashlib.sha256(f"capy {__version__} shipped {CACHE_FORMAT}\n".encode())
    for name, text in sorted(texts.items()):
        digest.update(name.encode() + b"\0" + text.encode("utf-8") + b"\0")
    for name, content in schema_bytes:
        digest.update(name.encode() + b"\0" + content + b"\0")
    return digest.hexdigest()


def _path(key: str) -> Path:
    from capy.config.paths import data_dir

    return data_dir() / "cache" / "rules-shipped" / f"{key[:32]}.json"


def read_shipped(key: str, files: list[str]) -> dict[str, Loaded] | None:
    """The parsed packs by display name, or None when there is no usable entry."""
    try:
        payload = json.loads(_path(key).read_text(encoding="utf-8"))
        if payload.get("key") != key or sorted(payload["packs"]) != sorted(files):
            return None
        return {
            file: Loaded(
                entry["data"], _positions(entry["positions"]), _positions(entry["key_positions"])
            )
            for file, entry in payload["packs"].items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def write_shipped(key: str, loaded: dict[str, Loaded]) -> None:
    """Best effort and atomic. Data that JSON would not give back unchanged is not cached."""
    packs = {
        file: {
            "data": item.data,
            "positions": _rows(item.positions),
            "key_positions": _rows(item.key_positions),
        }
        for file, item in loaded.items()
    }
    try:
        text = json.dumps({"key": key, "packs": packs}, ensure_ascii=False)
        # Read back once (once per pack cost a cold start about a second under load).
        reread = json.loads(text)["packs"]
        if any(reread[file]["data"] != item.data for file, item in loaded.items()):
            return  # e.g. a non-string mapping key, which JSON would turn into a string
        path = _path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        from capy.atomicfile import write_atomically

        write_atomically(path, text.encode())
        # A few entries: two installs of different versions may share one data folder.
        entries = sorted(path.parent.glob("*.json"), key=lambda p: p.stat().st_mtime)
        for stale in entries[:-KEEP_ENTRIES]:
            stale.unlink(missing_ok=True)
    except (OSError, ValueError, TypeError):
        return


def _rows(table: dict[PathKey, Position]) -> list[list[Any]]:
    return [[list(path), position.line, position.column] for path, position in table.items()]


def _positions(rows: list[list[Any]]) -> dict[PathKey, Position]:
    return {tuple(path): Position(int(line), int(column)) for path, line, column in rows}
