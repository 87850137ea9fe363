"""Vault errors. They subclass the store's, so every command's `guarded` prints their one-line
`message` and exits 2, as it does for the knowledge base."""

from __future__ import annotations

from pathlib import Path

from capy.store.errors import StoreError


class VaultError(StoreError):
    """A vault problem a person must resolve; `message` says what and how."""


class NewerVaultError(VaultError):
    """The vault was written by a newer capy whose format this one cannot read safely."""


class UnknownSessionError(VaultError):
    """No archived session, or more than one, matches what was asked for."""


class RestoreConflictError(VaultError):
    """A restore would overwrite a different file; nothing was written over it."""

    def __init__(self, message: str, clash: Path | None = None) -> None:
        super().__init__(message)
        self.clash = clash  # the file in the way, for a reply that is not the CLI's


class CorruptBlobError(VaultError):
    """A stored blob no longer decodes to the bytes its hash names."""
