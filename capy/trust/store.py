"""The user's trusted projects: each project's root and a fingerprint of the files it ships.

Kept in the user's config dir (never in a project, which could ship its own), as JSON capy
writes itself. Trust holds only while the fingerprint matches: editing, adding or removing a
project overlay or config file drops it until the user runs `capy trust` again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from capy.config import paths

STORE_FORMAT = 1


class TrustStoreError(Exception):
    """The trusted-projects file cannot be read or written; the message says which and why."""


@dataclass(frozen=True)
class TrustedProject:
    root: str
    fingerprint: str
    trusted_at: str
    files: tuple[str, ...]

    def matches(self, root: Path) -> bool:
        return self.fingerprint == fingerprint(root)


def store_path(environ: Mapping[str, str] | None = None) -> Path:
    return paths.trusted_projects_file(environ)


def project_files(root: Path) -> list[Path]:
    """What a project ships that can change capy's behaviour: its overlays and config files."""
    rules_dir = paths.project_rules_dir(root)
    try:
        overlays = sorted(p for p in rules_dir.iterdir() if p.suffix in (".yaml", ".yml"))
    except OSError:  # no folder, or one capy cannot list and so cannot load overlays from
        overlays = []
    return [*overlays, *(path for path in paths.project_config_files(root) if path.is_file())]


def fingerprint(root: Path) -> str:
    """sha256 over each project file's name and bytes, so an added file changes it too."""
    digest = hashlib.sha256(b"capy project files 1\n")
    for path in project_files(root):
        try:
            content = path.read_bytes()
        except OSError:
            content = b"<unreadable>"
        name = path.relative_to(root).as_posix()
        digest.update(name.encode() + b"\0" + str(len(content)).encode() + b"\0" + content)
    return digest.hexdigest()


def trusted_projects(environ: Mapping[str, str] | None = None) -> list[TrustedProject]:
    """Every project the user trusted, whether or not its files still match."""
    path = store_path(environ)
    try:
        payload = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as error:
        raise TrustStoreError(
            f"{path}: cannot be read ({error}); remove it and trust again"
        ) from None
    entries = payload.get("projects") if isinstance(payload, dict) else None
    if not isinstance(entries, list):
        raise TrustStoreError(f"{path}: not a capy trust file; remove it and trust again")
    found = []
    for entry in entries:
        if isinstance(entry, dict) and isinstance(entry.get("root"), str):
            found.append(
                TrustedProject(
                    entry["root"],
                    str(entry.get("fingerprint", "")),
                    str(entry.get("trusted_at", "")),
                    tuple(str(name) for name in entry.get("files") or ()),
                )
            )
    return found


def is_trusted(root: Path, environ: Mapping[str, str] | None = None) -> bool:
    """Whether the user trusts this project as its files are now. An unreadable store trusts
    nothing: the guard fails closed."""
    try:
        entries = trusted_projects(environ)
    except TrustStoreError:
        return False
    key = str(root)
    return any(entry.root == key and entry.matches(root) for entry in entries)


def trust(root: Path, environ: Mapping[str, str] | None = None) -> TrustedProject:
    """Trust the project's files as they are now (replacing an older entry for the same root)."""
    from datetime import UTC, datetime

    entry = TrustedProject(
        str(root),
        fingerprint(root),
        datetime.now(UTC).isoformat(timespec="seconds"),
        tuple(path.relative_to(root).as_posix() for path in project_files(root)),
    )
    kept = [item for item in _entries_or_empty(environ) if item.root != entry.root]
    _write([*kept, entry], environ)
    return entry


def revoke(root: Path, environ: Mapping[str, str] | None = None) -> bool:
    """Forget the project; False when it was not trusted."""
    entries = _entries_or_empty(environ)
    kept = [item for item in entries if item.root != str(root)]
    if len(kept) == len(entries):
        return False
    _write(kept, environ)
    return True


def _entries_or_empty(environ: Mapping[str, str] | None) -> list[TrustedProject]:
    # A damaged store is replaced by a good one rather than blocking `capy trust` forever.
    try:
        return trusted_projects(environ)
    except TrustStoreError:
        return []


def _write(entries: list[TrustedProject], environ: Mapping[str, str] | None) -> None:
    # Imported here: every hook reads the store's path, only `capy trust` writes it.
    from capy.atomicfile import write_atomically

    path = store_path(environ)
    payload = {
        "format": STORE_FORMAT,
        "projects": [
            {
                "root": item.root,
                "fingerprint": item.fingerprint,
                "trusted_at": item.trusted_at,
                "files": list(item.files),
            }
            for item in entries
        ],
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, (json.dumps(payload, indent=2) + "\n").encode())
    except OSError as error:
        raise TrustStoreError(f"{path}: cannot be written ({error.strerror or error})") from None
