"""Writing a setup plan: a backup of every file first, then atomic replacement of each."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

from capy.atomicfile import PRIVATE, write_atomically
from capy.setup.plan import FileChange, SetupPlan


def backup_root() -> Path:
    """A fresh folder for this run's backups, under capy's data directory (never in the repo)."""
    from capy.config.paths import data_dir

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return data_dir() / "setup-backups" / stamp


def apply_plan(plan: SetupPlan, backups: Path | None = None) -> list[tuple[FileChange, Path]]:
    """Back up every file that exists and will change, then write them; returns the backups."""
    pending = plan.pending
    root = backups or backup_root()
    saved = []
    for change in pending:  # every backup before the first write
        if change.before is not None:
            saved.append((change, _backup(change, root)))
    for change in pending:
        if change.after is None:
            change.path.unlink(missing_ok=True)
            _remove_empty_folders(change)
        else:
            write_atomic(change.path, change.after)
    return saved


def _remove_empty_folders(change: FileChange) -> None:
    """The folders a deleted file sat in, up to the project or home, when nothing else is there."""
    depth = len(change.shown.removeprefix("~/").split("/")) - 1
    for folder in list(change.path.parents)[:depth]:
        try:
            folder.rmdir()
        except OSError:  # not empty: someone else's files live there
            return


def _backup(change: FileChange, root: Path) -> Path:
    relative = change.shown.removeprefix("~/") if change.shown.startswith("~/") else change.shown
    area = "home" if change.shown.startswith("~/") else "project"
    target = root / area / relative.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    shutil.copy2(change.path, target)
    return target


def write_atomic(path: Path, text: str) -> None:
    """Replace the file in one step, keeping its permissions; a crash leaves the old or the new."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    write_atomically(path, text.encode(), mode=PRIVATE if mode is None else mode)
