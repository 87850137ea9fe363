"""What `capy index FOLDER` and `capy_index(paths=[...])` hand the batch indexer.

A folder stands for the regular files under it, in sorted order, each labelled by its path as
given joined with its path inside the folder. Hidden entries (a name starting with `.`: `.git`,
`.venv`, editor state) and empty files are left out, and symbolic links are not followed, so a
link cannot pull in a tree outside the folder or loop. Each file is read only when its turn
comes, through `read_file_for_index` (the per-source cap and its notes apply as to one file).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from capy.store.batch import BatchItem
from capy.store.intake import Intake, read_file_for_index

if TYPE_CHECKING:
    from capy.rules.views.retention import Size


class StoreFiles:
    """The knowledge base's own files, which a folder holding it must not index into itself:
    the database and everything capy and SQLite keep beside it under its name (`-wal`, `-shm`,
    `.keycheck`, `.lock`, backups made while re-keying)."""

    def __init__(self, store_path: Path | None) -> None:
        resolved = store_path.resolve() if store_path is not None else None
        self.folder = resolved.parent if resolved is not None else None
        self.name = resolved.name if resolved is not None else ""

    def holds(self, path: Path) -> bool:
        if self.folder is None or path.parent.resolve() != self.folder:
            return False
        name = path.name
        return name == self.name or name.startswith((self.name + "-", self.name + "."))


def folder_files(folder: Path, skip: StoreFiles | None = None) -> Iterator[Path]:
    """The regular files under `folder`, hidden entries, links and `skip` left out, sorted."""
    for root, directories, files in os.walk(folder):
        directories[:] = sorted(name for name in directories if not name.startswith("."))
        for name in sorted(files):
            path = Path(root, name)
            if name.startswith(".") or not _has_content(path):
                continue
            if skip is None or not skip.holds(path):
                yield path


def _has_content(path: Path) -> bool:
    # Empty files (an `__init__.py`) hold nothing to search: left out, not failed.
    return not path.is_symlink() and path.is_file() and path.stat().st_size > 0


def expand(path: Path, label: str, store_path: Path | None = None) -> Iterator[tuple[Path, str]]:
    """(file, label) for a file, or for each file under a folder but the store's own."""
    if not path.is_dir():
        yield path, label
        return
    for file in folder_files(path, StoreFiles(store_path)):
        yield file, os.path.join(label, file.relative_to(path).as_posix())


@dataclass
class FileIntakes:
    """Batch items that read their file when indexed, and what each read kept (for notes)."""

    size: Size
    kind: str = "durable"
    content_type: str = "auto"
    intakes: dict[str, Intake] = field(default_factory=dict)

    def items(self, files: Sequence[tuple[Path, str]]) -> list[BatchItem]:
        return [
            BatchItem(label, self._reader(path, label), self.kind, self.content_type)
            for path, label in files
        ]

    def _reader(self, path: Path, label: str):
        def read() -> str | bytes:
            intake = read_file_for_index(path, self.size, label=label)
            self.intakes[label] = intake
            return intake.content

        return read
