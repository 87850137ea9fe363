"""Which database file and which key a project uses, resolved without touching either."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from capy.config.paths import project_root
from capy.digests import sha256
from capy.store.keys import KeySource, key_source

TYPE_CHECKING = False
if TYPE_CHECKING:
    from capy.config import Settings
    from capy.config.loader import ResolvedSettings

DB_FILE_NAME = "knowledge.db"
KNOWLEDGE_KEY_NAME = "db"


@dataclass(frozen=True)
class StoreLocation:
    """A project's knowledge database: its file, its project root and where its key comes from."""

    path: Path
    project_root: Path
    key_source: KeySource


def project_hash(root: Path) -> str:
    """A short, stable directory name for a project root (its resolved path, hashed)."""
    return sha256(str(root.resolve()).encode()).hexdigest()[:16]


def resolve_db_path(project_dir: Path, settings: Settings) -> Path:
    """`settings.db_path` when configured (relative: against the project root), else the default.

    The default is `<data_dir>/<project-hash>/knowledge.db`; `project_root` maps a linked git
    worktree to its main worktree, so every worktree of a repository shares one knowledge base.
    """
    root = project_root(project_dir)
    if settings.db_path is not None:
        path = settings.db_path.expanduser()
        return path if path.is_absolute() else root / path
    return settings.data_dir / project_hash(root) / DB_FILE_NAME


def locate_store(
    project_dir: Path | None = None,
    db_path: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> StoreLocation:
    """Resolve settings, then the file and key source; `db_path` (e.g. `--db`) wins over both.

    A relative `db_path` given here is taken relative to the current directory, as a path typed
    on a command line is; a relative configured path is relative to the project root.
    """
    from capy.config import load_settings

    resolved = load_settings(project_dir, environ)
    settings = resolved.settings
    if db_path is not None:
        path = Path(os.path.abspath(db_path.expanduser()))
    else:
        path = resolve_db_path(resolved.project_root, settings)
    source = configured_key_source(resolved, KNOWLEDGE_KEY_NAME, "db_key")
    return StoreLocation(path=path, project_root=resolved.project_root, key_source=source)


def configured_key_source(resolved: ResolvedSettings, name: str, setting: str) -> KeySource:
    """Where database `name`'s key comes from: the key `setting` when set, else its generated
    key file. An env var names itself; a config file is named with the key it sets."""
    origin = resolved.provenance.get(setting, "")
    label = origin if origin.startswith("CAPY_") else f"{setting} in {origin}"
    settings = resolved.settings
    return key_source(name, getattr(settings, setting), settings.key_dir, label)


def chosen_file(
    given: Path | None, configured: Path | None, default: Path, project_root: Path
) -> Path:
    """`given` (typed on a command line: relative to the current directory) wins over the
    `configured` path (relative: to the project root); neither means `default`."""
    if given is not None:
        return Path(os.path.abspath(given.expanduser()))
    if configured is not None:
        chosen = configured.expanduser()
        return chosen if chosen.is_absolute() else project_root / chosen
    return default
