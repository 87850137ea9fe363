"""A cache of chunk vectors for benchmarks, by model and text hash, so that a collection of
thousands of documents is embedded once per machine, not once per run.

Benchmark data is public (TREC, LoCoMo, the fixtures), so the cache is a plain SQLite file
under the user's cache folder; the stores the benchmarks measure stay encrypted as always.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def cache_path(model_id: str) -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in model_id)
    return base / "capy-bench" / f"vectors-{safe}.sqlite"


class CachedEmbedder:
    """An embedder (see capy.capsules.stages.embed.Embedder) that reads vectors it has seen
    from the cache and embeds only the rest."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dims = inner.dims
        path = cache_path(inner.model_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS v (hash BLOB PRIMARY KEY, vector BLOB)")
        self.hits = 0
        self.misses = 0

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        keys = [hashlib.sha256(text.encode()).digest() for text in texts]
        found: dict[bytes, bytes] = {}
        for start in range(0, len(keys), 500):
            part = keys[start : start + 500]
            marks = ", ".join("?" * len(part))
            found.update(
                self._db.execute(f"SELECT hash, vector FROM v WHERE hash IN ({marks})", part)
            )
        missing = [i for i, key in enumerate(keys) if key not in found]
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        if missing:
            made = self.inner.embed([texts[i] for i in missing])
            rows = [(keys[i], vector) for i, vector in zip(missing, made, strict=True)]
            self._db.executemany("INSERT OR REPLACE INTO v VALUES (?, ?)", rows)
            self._db.commit()
            found.update(rows)
        return [found[key] for key in keys]

    def windows(self, *args: Any) -> list[str]:
        return self.inner.windows(*args)
