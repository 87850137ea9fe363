"""Which capsule log file and which key are used, resolved without touching either.

One log per user, beside the knowledge bases and the vault: `<data_dir>/capsules.db`, holding
every scope (tenant and project), so recall across projects is one query. Closed segments (the
immutable JSON archive) live in `<data_dir>/capsules-archive/` next to it. `capsules_path` in the
settings (`CAPY_CAPSULES_PATH`) or `--path` selects another file; the key is `CAPY_CAPSULES_KEY`
/ `capsules_key`, else the generated `capsules.key` under the key dir.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from capy.store.keys import KeySource
from capy.store.location import chosen_file, configured_key_source

CAPSULES_FILE_NAME = "capsules.db"
CAPSULES_KEY_NAME = "capsules"
CAPSULES_SETTING = "--path or CAPY_CAPSULES_PATH"


@dataclass(frozen=True)
class CapsulesLocation:
    path: Path
    key_source: KeySource
    project_root: Path

    @property
    def archive_dir(self) -> Path:
        """Where closed segments are sealed: beside the database, named after it
        (`capsules-archive/` for the default `capsules.db`)."""
        return self.path.with_name(self.path.stem + "-archive")


def locate_capsules(
    path: Path | None = None,
    project_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> CapsulesLocation:
    """`path` (e.g. `--path`, relative to the current directory) wins over the settings."""
    from capy.config import load_settings

    resolved = load_settings(project_dir, environ)
    settings = resolved.settings
    default = settings.data_dir / CAPSULES_FILE_NAME
    chosen = chosen_file(path, settings.capsules_path, default, resolved.project_root)
    source = configured_key_source(resolved, CAPSULES_KEY_NAME, "capsules_key")
    return CapsulesLocation(path=chosen, key_source=source, project_root=resolved.project_root)
