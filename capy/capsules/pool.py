"""Open capsule log connections kept by a long-lived process (the MCP server) and reused.

`capy_recall` opened the log per call: a SQLCipher open, a cold page cache, and, the log's
only connection closing, a WAL checkpoint and the `-wal` and `-shm` files deleted, to be made
again by the next call. At 100,000 capsules that cost a recall about 7 ms of its wall time
(p50, measured on the benchmark's scale log). The knowledge base's pool
(`capy.store.pool`) keeps its connections open with the checks a fresh open made (files
replaced or deleted, key files rewritten, settings changed); this is the same pool over the
capsule log.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from capy.store.pool import StorePool

if TYPE_CHECKING:
    from capy.capsules import CapsuleStore


class CapsulesPool(StorePool):
    """Reusable open capsule logs for one project; `close()` ends them all."""

    what = "the capsule log"

    def _locate(self) -> Any:
        from capy.capsules.location import locate_capsules

        return locate_capsules(None, self._project_dir)

    def _open_store(self, location: Any) -> CapsuleStore:  # type: ignore[override]
        from capy.capsules import open_located_capsules

        return open_located_capsules(location, notify=self._notify)
