"""Store errors: each `message` is one sentence a person can act on; the CLI prints it, exit 2."""

from __future__ import annotations


class StoreError(Exception):
    """A knowledge-store problem a person must resolve; `message` says what and how."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class KeyFileError(StoreError):
    """A key file that is unsafe (readable by others) or malformed; capy will not guess."""


class WrongKeyError(StoreError):
    """The database is encrypted with a different key than the one configured."""


class PlaintextDatabaseError(StoreError):
    """An unencrypted SQLite file sits where an encrypted database is expected."""


class CorruptDatabaseError(StoreError):
    """A damaged database that could not be moved aside and replaced."""


class EncryptError(StoreError):
    """`capy encrypt` could not produce or verify the re-encrypted copy; the original is intact."""


class NewerSchemaError(StoreError):
    """The database holds schema changes this capy does not know: a newer capy wrote it."""
