"""Encryption keys for capy's databases: from the environment, or a generated 0600 key file.

One machinery serves every encrypted database, parametrised by a key name: `db` (the knowledge
base, `CAPY_DB_KEY`, `db.key`), `vault` (`CAPY_VAULT_KEY`, `vault.key`) and `capsules` (the
capsule log, `CAPY_CAPSULES_KEY`, `capsules.key`).

What a configured key (`CAPY_<NAME>_KEY` or `<name>_key` in the user config) means:
- 64 hex digits, optionally written `x'...'`: a raw 256-bit key, used as is.
- anything else: a passphrase, stretched once per process with PBKDF2-HMAC-SHA512 (256,000
  rounds, SQLCipher 4's own default) into a raw key. SQLCipher would otherwise run its KDF on every
  connection (~120 ms); a raw key opens in ~0.2 ms, and hooks open a connection per tool call.
  The salt is fixed per key name (there is nowhere to keep a per-file salt before the file can be
  decrypted), so a weak passphrase is weaker than a generated key: prefer the generated key file.

Keys are never logged or printed; `DatabaseKey` hides its bytes from `repr`.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from capy.atomicfile import unlink_quietly, written_temporary
from capy.store.errors import KeyFileError

# hashlib and secrets are imported where a key is stretched or made: opening a store with a key
# it has needs neither, and loading OpenSSL's hashes costs a warm command dearly (capy.digests).

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pydantic import SecretStr

KEY_BYTES = 32
_HEX_KEY = re.compile(r"(?:[xX]'([0-9a-fA-F]{64})'|([0-9a-fA-F]{64}))")
_KEY_FILE_TEXT = re.compile(r"[0-9a-fA-F]{64}")
_KDF_ROUNDS = 256_000
_KEY_CHECK_LABEL = b"capy key check v1"


@dataclass(frozen=True)
class KeySource:
    """Where a database's key comes from, known without reading or creating anything."""

    name: str  # "db", "vault"
    label: str  # shown to people: an env var, a config file, or "key file <path>"
    secret: SecretStr | None = field(default=None, repr=False)
    key_file: Path | None = None

    @property
    def env_var(self) -> str:
        return env_var_for(self.name)

    @property
    def is_key_file(self) -> bool:
        return self.secret is None


@dataclass(frozen=True, repr=False)
class DatabaseKey:
    """A raw 256-bit key and where it came from. `repr` never shows the bytes."""

    raw: bytes
    source: KeySource

    def __repr__(self) -> str:
        return f"DatabaseKey(source={self.source.label!r})"

    def pragma(self) -> str:
        """The statement that unlocks a connection with this raw key (no per-connection KDF)."""
        return f"PRAGMA key = \"x'{self.raw.hex()}'\""

    def attach_clause(self) -> str:
        """The `KEY ...` clause of `ATTACH DATABASE ... KEY` for this raw key."""
        return f"KEY \"x'{self.raw.hex()}'\""

    def fingerprint(self) -> str:
        """A keyed hash that says whether two keys are the same and reveals nothing about them."""
        from capy.digests import hmac_sha256

        return hmac_sha256(self.raw, _KEY_CHECK_LABEL).hex()[:32]


def derived_key(key: DatabaseKey, purpose: str) -> bytes:
    """A 256-bit key for one `purpose` (e.g. sealing a database's archive), derived from the
    database's raw key: a file beside the database is readable exactly where the database
    is, with no second key to lose. HMAC-SHA256 of a uniformly random key is a sound KDF."""
    from capy.digests import hmac_sha256

    return hmac_sha256(key.raw, b"capy derived key v1:" + purpose.encode())


def env_var_for(name: str) -> str:
    return f"CAPY_{name.upper()}_KEY"


# The command that re-encrypts each database under a fresh key; a key name missing here has none.
_ROTATE_COMMANDS = {"db": "capy encrypt --rotate", "vault": "capy vault rekey --rotate"}


def after_exposure(name: str) -> str:
    """What to do about a key file others may have read: rotate it, where capy can."""
    command = _ROTATE_COMMANDS.get(name)
    if command:
        return f"if others may have read it, rotate it with `{command}`"
    return (
        f"if others may have read it, know that capy cannot rotate the {name} key: what it "
        "encrypts stays readable with the old one"
    )


def key_file_path(key_dir: Path, name: str) -> Path:
    return key_dir / f"{name}.key"


def key_source(
    name: str, secret: SecretStr | None, key_dir: Path, secret_label: str | None = None
) -> KeySource:
    """The configured secret when there is one, else the key file under `key_dir`."""
    if secret is not None and secret.get_secret_value().strip():
        return KeySource(name=name, label=secret_label or env_var_for(name), secret=secret)
    path = key_file_path(key_dir, name)
    return KeySource(name=name, label=f"key file {path}", key_file=path)


def load_key(source: KeySource) -> DatabaseKey:
    """The raw key for `source`, generating the key file on first use."""
    if source.secret is not None:
        return DatabaseKey(key_from_text(source.secret.get_secret_value(), source.name), source)
    assert source.key_file is not None
    return DatabaseKey(load_or_create_key_file(source.key_file), source)


def key_from_text(text: str, name: str) -> bytes:
    """A configured key: 64 hex digits are a raw key, anything else a passphrase (module doc)."""
    text = text.strip()
    if match := _HEX_KEY.fullmatch(text):
        return bytes.fromhex(match.group(1) or match.group(2))
    return _stretch(text, name)


@lru_cache(maxsize=8)
def _stretch(passphrase: str, name: str) -> bytes:
    # Cached so that a process pays the KDF once, not once per connection.
    import hashlib

    salt = b"capy/" + name.encode()
    return hashlib.pbkdf2_hmac("sha512", passphrase.encode(), salt, _KDF_ROUNDS, KEY_BYTES)


def load_or_create_key_file(path: Path) -> bytes:
    """Read the key file, or create it with a fresh random key if it does not exist yet."""
    _refuse_moved(path)
    try:
        return read_key_file(path)
    except FileNotFoundError:
        pass
    import secrets

    raw = secrets.token_bytes(KEY_BYTES)
    if write_key_file(path, raw, replace=False):
        return raw
    # Another process created it between our read and our write: its key is the one.
    return read_key_file(path)


def read_key_file(path: Path) -> bytes:
    """A key file must be private to its owner and hold exactly 64 hex digits."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        mode = os.fstat(fd).st_mode
        data = os.read(fd, 4096)
    finally:
        os.close(fd)
    if os.name == "posix" and stat.S_IMODE(mode) & 0o077:
        raise KeyFileError(
            f"key file {path} is readable by other users (mode {stat.S_IMODE(mode):o}); "
            f"run `chmod 600 {path}` and, {after_exposure(path.stem)}"
        )
    text = data.decode("ascii", errors="replace").strip()
    if not _KEY_FILE_TEXT.fullmatch(text):
        raise KeyFileError(
            f"key file {path} does not hold a 256-bit key (64 hex digits, got {len(text)} "
            "characters); restore it from a backup, or set the key in the environment instead"
        )
    return bytes.fromhex(text)


def write_key_file(path: Path, raw: bytes, *, replace: bool) -> bool:
    """Write `raw` as a 0600 key file; never leaves a partial file under `path`.

    The key goes to a private temporary file first. Without `replace` it is then hard-linked
    into place, which fails if `path` exists: two processes racing on first use end up sharing
    whichever key landed first (False is returned to the loser). With `replace` it is renamed
    over `path` (used when rotating).
    """
    _refuse_moved(path)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = written_temporary(path, raw.hex().encode() + b"\n", durable=True)
    try:
        if replace:
            os.replace(temporary, path)
            return True
        return _link_exclusively(Path(temporary), path, raw)
    finally:
        unlink_quietly(temporary)


def _refuse_moved(path: Path) -> None:
    """A key in a folder that this process hid from its sandboxed calls, and that has moved
    since (a call renamed its parent and may have left a decoy at the old path), is neither
    read nor made: capy would take the decoy's key, or leave a new one where the call put it.
    Only a process that hid its folders (it ran a call) has anything to check: the module is
    looked up, never imported for this."""
    hidden = sys.modules.get("capy.executor.hidden")
    if hidden is not None and (why := hidden.moved_holding(path)):
        raise KeyFileError(f"capy will not use the key file {path}: {why}")


def _link_exclusively(temporary: Path, path: Path, raw: bytes) -> bool:
    try:
        os.link(temporary, path)
        return True
    except FileExistsError:
        return False
    except OSError as error:
        if error.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV):
            raise
    # A file system without hard links: O_EXCL on the final name still lets only one creator win.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    try:
        os.write(fd, raw.hex().encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    return True
