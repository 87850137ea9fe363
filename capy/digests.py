"""SHA-256 and HMAC-SHA256 from the interpreter's own SHA-256, without `hashlib`.

`import hashlib` loads OpenSSL's libcrypto into the process and lists every digest it offers,
which costs a warm `capy search` or `stats` a fifth of a bare Python start; all they hash is a
project path and the key-check fingerprint a store open compares. CPython builds SHA-256 in
(`_sha256`, `_sha2` from 3.12), with the same digests; a Python built without it falls back on
`hashlib`. HMAC is RFC 2104's construction, as `hmac` computes it when handed a digest
constructor of its own (a test holds both equal).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_BLOCK_BYTES = 64  # SHA-256's block size
_INNER_PAD = bytes(byte ^ 0x36 for byte in range(256))
_OUTER_PAD = bytes(byte ^ 0x5C for byte in range(256))


def _builtin_sha256() -> Callable[..., Any]:
    try:
        from _sha2 import sha256  # type: ignore[import-not-found]  # Python 3.12 and later
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found,no-redef]
        except ImportError:
            from hashlib import sha256  # type: ignore[assignment]
    return sha256


sha256 = _builtin_sha256()


def hmac_sha256(key: bytes, message: bytes) -> bytes:
    """HMAC-SHA256 of `message` under `key`: `hmac.new(key, message, "sha256").digest()`."""
    if len(key) > _BLOCK_BYTES:
        key = sha256(key).digest()
    key = key.ljust(_BLOCK_BYTES, b"\0")
    inner = sha256(key.translate(_INNER_PAD) + message).digest()
    return sha256(key.translate(_OUTER_PAD) + inner).digest()
