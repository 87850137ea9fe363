"""What the sweep already did, per knowledge base: a small JSON file beside the database.

A JSON file rather than a table, so a dry run can read it without opening (or creating) the
encrypted database, and so that it holds nothing but paths, sizes and times. It never holds
transcript text. A state file whose database is gone is ignored: the sessions are swept again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from capy.atomicfile import write_atomically

STATE_SUFFIX = ".sweep.json"
STATE_VERSION = 1


def fingerprint(paths: list[Path]) -> str:
    """Modification time and size of a transcript and its sidecars: what 'unchanged' means."""
    parts = []
    for path in paths:
        try:
            stat = path.stat()
        except OSError:
            continue
        parts.append(f"{path.name}:{stat.st_mtime_ns}:{stat.st_size}")
    return "|".join(parts)


@dataclass
class SweepState:
    db_path: Path
    entries: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return state_path(self.db_path)

    def is_unchanged(self, transcript: Path, print_: str) -> bool:
        entry = self.entries.get(str(transcript))
        return entry is not None and entry.get("fingerprint") == print_

    def record(self, transcript: Path, print_: str, outcome: str, label: str | None) -> None:
        self.entries[str(transcript)] = {
            "fingerprint": print_,
            "outcome": outcome,
            "label": label or "",
        }

    def save(self) -> None:
        """Atomically: a sweep killed half-way leaves the old file or the new one."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps({"version": STATE_VERSION, "sessions": self.entries}, indent=1)
        write_atomically(self.path, data.encode())


def state_path(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + STATE_SUFFIX)


def load_state(db_path: Path) -> SweepState:
    """The recorded state, or an empty one (no database yet, unreadable or foreign file)."""
    state = SweepState(db_path)
    if not db_path.is_file():
        return state
    try:
        data = json.loads(state.path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return state
    sessions = data.get("sessions") if isinstance(data, dict) else None
    if isinstance(sessions, dict) and data.get("version") == STATE_VERSION:
        state.entries = {
            str(key): value for key, value in sessions.items() if isinstance(value, dict)
        }
    return state
