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


def folder_files(folder: Path) -> Iterator[Path]:
    """The regular files under `folder`, hidden entries and links left out, in sorted order."""
    for root, directories, files in os.walk(folder):
        directories[:] = sorted(name for name in directories if not name.startswith("."))
        for name in sorted(files):
            path = Path(root, name)
            if not name.startswith(".") and _has_content(path):
                yield path


def _has_content(path: Path) -> bool:
    # Empty files (an `__init__.py`) hold nothing to search: left out, not failed.
    return not path.is_symlink() and path.is_file() and path.stat().st_size > 0


def expand(path: Path, label: str) -> Iterator[tuple[Path, str]]:
    """(file, label) for a file, or for each file under a folder."""
    if not path.is_dir():
        yield path, label
        return
    for file in folder_files(path):
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
