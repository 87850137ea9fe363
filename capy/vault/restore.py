"""Writing an archived session's files back, byte for byte, to their place or another folder.

Every file is checked against its hash before it is written (see `capy.vault.blobs`) and
written through a temporary file renamed into place, so a failed restore leaves no partial
file. A file already there with the same bytes is left alone; one with other bytes is never
overwritten: the restore stops before writing anything and says where to restore instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from capy.atomicfile import write_atomically
from capy.vault import Vault
from capy.vault.blobs import content_hash, load_blob
from capy.vault.errors import RestoreConflictError, UnknownSessionError


@dataclass(frozen=True)
class RestoredFile:
    path: Path
    size: int
    written: bool  # False: an identical file was already there


def find_session(vault: Vault, wanted: str) -> tuple[int, str, str]:
    """(rowid, label, source path) of the one session named by an id, an id prefix, or
    `<platform>:<id>`."""
    platform, _, session_id = wanted.rpartition(":") if ":" in wanted else ("", "", wanted)
    rows = vault.conn.execute(
        "SELECT id, platform || ':' || session_id, source_path FROM sessions "
        "WHERE substr(session_id, 1, ?) = ? AND (? = '' OR platform = ?) ORDER BY id",
        (len(session_id), session_id, platform, platform),
    ).fetchall()
    exact = [row for row in rows if row[1].endswith(":" + session_id)]
    rows = exact or rows
    if not rows:
        raise UnknownSessionError(
            f"no archived session matches {wanted!r}; `capy vault list` shows their ids"
        )
    if len(rows) > 1:
        names = ", ".join(row[1] for row in rows[:5])
        raise UnknownSessionError(
            f"{wanted!r} matches {len(rows)} sessions ({names}); give more of the id"
        )
    return rows[0]


def restore_session(vault: Vault, wanted: str, output: Path | None = None) -> list[RestoredFile]:
    """Write the session's transcript and sidecars under `output`, or where they came from."""
    session_rowid, label, source_path = find_session(vault, wanted)
    base = _folder(source_path, output)
    files = vault.conn.execute(
        "SELECT relpath, blob_hash FROM session_files WHERE session = ? ORDER BY relpath",
        (session_rowid,),
    ).fetchall()
    contents = [
        (_target(base, relpath), load_blob(vault.conn, digest)) for relpath, digest in files
    ]
    present = {target: _same_bytes(target, data) for target, data in contents}
    clashes = [target for target, same in present.items() if same is False]
    if clashes:
        raise RestoreConflictError(
            f"restoring {label} would overwrite {clashes[0]}, which holds other bytes; nothing "
            "was written: restore elsewhere with --output DIR",
            clashes[0],
        )
    restored = []
    for target, data in contents:
        if not present[target]:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(target, data)
        restored.append(RestoredFile(target, len(data), written=not present[target]))
    return restored


def restore_folder(vault: Vault, wanted: str, output: Path | None = None) -> Path:
    """The folder `restore_session` writes the session's files under."""
    return _folder(find_session(vault, wanted)[2], output)


def _folder(source_path: str, output: Path | None) -> Path:
    return output if output is not None else Path(source_path).parent


def _target(base: Path, relpath: str) -> Path:
    target = base / relpath
    if ".." in Path(relpath).parts or Path(relpath).is_absolute():
        raise RestoreConflictError(f"refusing to restore to {relpath!r}: it leaves {base}")
    return target


def _same_bytes(target: Path, data: bytes) -> bool | None:
    """None: nothing there; True: the same bytes; False: something else."""
    if not target.exists():
        return None
    return target.is_file() and content_hash(target.read_bytes()) == content_hash(data)
