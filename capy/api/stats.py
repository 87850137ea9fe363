"""Per-session savings: what each tool processed against what it returned to the agent.

The server records every call and rewrites a small JSON file beside the knowledge base, so
`capy stats` in another process shows the same report. In the server the file is written by a
thread of its own (an atomic rename costs milliseconds the agent would otherwise wait for),
`SAVE_AFTER_S` after a call, once for all the calls made meanwhile, and once more at exit
(`flush`): a save costs 0.3 ms of CPU, which an agent's burst of calls paid on every call while
the reply went out. A crash loses at most the calls of that last moment.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capy.atomicfile import write_atomically

if TYPE_CHECKING:
    from capy.api.reply import ToolReply
    from capy.api.workspace import Workspace

SESSIONS_DIR = "sessions"
# A common rule of thumb for English text and code under current tokenizers: about four bytes
# per token. Reported as an estimate, never as a measurement.
BYTES_PER_TOKEN = 4
# How long the server's saver waits after a call before it writes, gathering the calls of a burst.
SAVE_AFTER_S = 1.0
COUNTS = ("calls", "errors", "processed_bytes", "returned_bytes", "cache_hits")


@dataclass
class ToolTotals:
    """One tool's calls, errors and bytes in a session."""

    calls: int = 0
    errors: int = 0
    processed_bytes: int = 0
    returned_bytes: int = 0
    cache_hits: int = 0

    def add(self, reply: ToolReply) -> None:
        self.calls += 1
        self.errors += int(reply.is_error)
        self.processed_bytes += reply.processed_bytes
        self.returned_bytes += reply.returned_bytes
        self.cache_hits += reply.cache_hits

    def as_dict(self) -> dict[str, int]:
        # Not dataclasses.asdict, which deep-copies every field: the server saves after each call.
        return {name: getattr(self, name) for name in COUNTS}

    @property
    def kept_out_bytes(self) -> int:
        return max(self.processed_bytes - self.returned_bytes, 0)


@dataclass
class SessionStats:
    """The context savings of one session, tool by tool, saved as they change."""

    session_id: str
    started_at: float
    path: Path | None = None
    tools: dict[str, ToolTotals] = field(default_factory=dict)
    background: bool = False  # saved by a thread of its own (the server) rather than inline
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _wake: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)
    _saver: threading.Thread | None = field(default=None, repr=False, compare=False)

    @classmethod
    def start(
        cls, workspace: Workspace, *, session_id: str | None = None, background: bool = False
    ) -> SessionStats:
        session_id = session_id or new_session_id()
        try:
            path = sessions_dir(workspace) / f"{_safe_name(session_id)}.json"
        except Exception:  # no usable store location: keep the stats in memory only
            path = None
        return cls(session_id=session_id, started_at=time.time(), path=path, background=background)

    def record(self, tool: str, reply: ToolReply) -> None:
        with self._lock:
            self.tools.setdefault(tool, ToolTotals()).add(reply)
            if not self.background:
                self._save()
                return
            if self._saver is None:
                self._saver = threading.Thread(
                    target=self._save_when_woken, name="capy-stats", daemon=True
                )
                self._saver.start()
        self._wake.set()

    def flush(self) -> None:
        """Write the file now (the server's exit), whatever the saver thread is doing."""
        with self._lock:
            self._save()

    def _save_when_woken(self) -> None:
        while True:
            self._wake.wait()
            time.sleep(SAVE_AFTER_S)  # after the reply went out; the burst's calls in one save
            self._wake.clear()  # calls recorded while saving wake it once more
            with self._lock:
                self._save()

    def totals(self) -> ToolTotals:
        total = ToolTotals()
        for item in self.tools.values():
            for name in COUNTS:
                setattr(total, name, getattr(total, name) + getattr(item, name))
        return total

    def to_dict(self) -> dict[str, Any]:
        total = self.totals()
        return {
            "session_id": self.session_id,
            "started_at": self.started_at,
            "tools": {name: item.as_dict() for name, item in sorted(self.tools.items())},
            "total": {
                **total.as_dict(),
                "kept_out_bytes": total.kept_out_bytes,
                "estimated_tokens_saved": total.kept_out_bytes // BYTES_PER_TOKEN,
            },
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: Path | None = None) -> SessionStats:
        tools = {name: ToolTotals(**values) for name, values in data.get("tools", {}).items()}
        return cls(
            session_id=str(data["session_id"]),
            started_at=float(data.get("started_at", 0)),
            path=path,
            tools=tools,
        )

    def _save(self) -> None:
        if self.path is None:
            return
        try:
            # Compact: an indented dump runs json's pure-Python encoder, four times slower.
            content = json.dumps(self.to_dict()).encode()
            try:
                write_atomically(self.path, content)
            except FileNotFoundError:  # the first save, or the folder was removed since
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                write_atomically(self.path, content)
        except OSError:
            # Stats are a report, not data: a read-only disk must not fail the tool call.
            self.path = None


def new_session_id() -> str:
    import secrets  # here: a stats report reads sessions, and never names a new one

    return time.strftime("%Y%m%dT%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


def sessions_dir(workspace: Workspace) -> Path:
    return workspace.store_directory() / SESSIONS_DIR


def _safe_name(session_id: str) -> str:
    kept = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in session_id)
    return kept.strip(".")[:120] or "session"


def load_session_stats(workspace: Workspace, session_id: str | None = None) -> SessionStats | None:
    """The named session's stats, or the most recently updated one; None when there are none."""
    folder = sessions_dir(workspace)
    if session_id is not None:
        candidates = [folder / f"{_safe_name(session_id)}.json"]
    else:
        candidates = sorted(
            folder.glob("*.json"), key=lambda path: path.stat().st_mtime, reverse=True
        )
    for path in candidates:
        try:
            return SessionStats.from_dict(json.loads(path.read_text(encoding="utf-8")), path)
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return None
