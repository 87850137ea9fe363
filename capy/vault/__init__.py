"""The session vault: every agent session kept verbatim (zstd-compressed, encrypted with
SQLCipher), searchable one message at a time, and restorable byte for byte.

    from capy.vault import open_vault
    from capy.vault.importer import ImportOptions, import_sessions

    with open_vault() as vault:
        report = import_sessions(vault, ImportOptions())

- `capy.vault.schema`: migrations and the `min_reader_version` marker.
- `capy.vault.blobs`: verbatim files, compressed at the blob seam, deduplicated by hash.
- `capy.vault.importer`: discovery, parsing and one transaction per session.
- `capy.vault.messages`: the FTS rows built from a parsed session.
- `capy.vault.corpus`: search through the shared retrieval core.
- `capy.vault.restore`, `capy.vault.catalog`: restore, list and stats.
- `capy.vault.render`, `capy.vault.tui`: show a session (redacted) as text, markdown or JSON,
  and the textual browser.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from capy.store import Store
from capy.store.database import Notify, stderr_notice
from capy.store.errors import StoreError
from capy.vault.errors import NewerVaultError
from capy.vault.location import VaultLocation, locate_vault


@dataclass
class Vault(Store):
    """An open vault: the same shape as the knowledge base's `Store`, its own location."""

    location: VaultLocation  # type: ignore[assignment]


def open_vault(
    path: Path | None = None, *, verify: bool = False, notify: Notify = stderr_notice
) -> Vault:
    """Open (creating on first use) the vault, migrated; raises a `StoreError` with a message."""
    from capy.store import refuse_missing_key_file
    from capy.store.database import open_database
    from capy.store.failures import VAULT_SETTING, explained_failures
    from capy.store.keys import load_key
    from capy.store.maintenance import is_plaintext
    from capy.vault.schema import prepare_vault

    location = locate_vault(path)
    with explained_failures(location.path, what="the session vault", setting=VAULT_SETTING):
        if location.path.is_file() and is_plaintext(location.path):
            raise plaintext_vault_error(location.path)  # before a key file is made for nothing
        refuse_missing_key_file(location)  # reads only .path and .key_source
        key = load_key(location.key_source)
        try:
            conn = open_database(
                location.path, key, verify=verify, notify=notify, migrator=prepare_vault
            )
        except NewerVaultError as error:
            raise NewerVaultError(f"{location.path}: {error.message}") from None
    return Vault(conn=conn, location=location, key=key)


def plaintext_vault_error(path: Path) -> StoreError:
    from capy.store.errors import PlaintextDatabaseError

    return PlaintextDatabaseError(
        f"{path} is an unencrypted SQLite file where capy expects its encrypted vault; capy "
        "left it untouched: move it away, or choose another vault with --path or CAPY_VAULT_PATH"
    )


__all__ = ["Vault", "VaultLocation", "locate_vault", "open_vault"]
