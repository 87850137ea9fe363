"""capy.digests gives the very bytes hashlib and hmac give: a store's key check and folder name
must read the same whichever computed them."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from capy.digests import hmac_sha256, sha256


@pytest.mark.parametrize("data", [b"", b"abc", b"x" * 63, b"x" * 64, b"x" * 1000])
def test_sha256_matches_hashlib(data: bytes) -> None:
    assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("key_length", [0, 1, 32, 63, 64, 65, 200])
@pytest.mark.parametrize("message", [b"", b"capy key check v1", bytes(range(256)) * 3])
def test_hmac_sha256_matches_hmac(key_length: int, message: bytes) -> None:
    key = bytes((index * 7 + 3) % 256 for index in range(key_length))
    assert hmac_sha256(key, message) == hmac.new(key, message, hashlib.sha256).digest()
