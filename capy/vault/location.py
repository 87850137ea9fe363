"""Which vault file and which key are used, resolved without touching either.

One vault per user, beside the knowledge bases: `<data_dir>/vault.db`. `vault_path` in the
settings (`CAPY_VAULT_PATH`) or `--path` on the command line selects another file; the key is
`CAPY_VAULT_KEY` / `vault_key`, else the generated `vault.key` under the key dir.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from capy.store.keys import KeySource
from capy.store.location import chosen_file, configured_key_source

VAULT_FILE_NAME = "vault.db"
VAULT_KEY_NAME = "vault"


@dataclass(frozen=True)
class VaultLocation:
    path: Path
    key_source: KeySource


def locate_vault(
    path: Path | None = None, environ: Mapping[str, str] | None = None
) -> VaultLocation:
    """`path` (e.g. `--path`, relative to the current directory) wins over the settings."""
    from capy.config import load_settings

    resolved = load_settings(None, environ)
    settings = resolved.settings
    default = settings.data_dir / VAULT_FILE_NAME
    chosen = chosen_file(path, settings.vault_path, default, resolved.project_root)
    source = configured_key_source(resolved, VAULT_KEY_NAME, "vault_key")
    return VaultLocation(path=chosen, key_source=source)
