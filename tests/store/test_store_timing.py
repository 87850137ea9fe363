"""Why capy uses raw keys: opening with a passphrase vs a raw key (printed, never asserted)."""

from __future__ import annotations

import time

import sqlcipher3

from capy.store.database import connect
from capy.store.keys import DatabaseKey, KeySource

ROUNDS = 5


def _open_with(path, pragma: str) -> float:
    start = time.perf_counter()
    for _ in range(ROUNDS):
        conn = sqlcipher3.connect(str(path))
        conn.execute(pragma)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()  # forces key derivation
        conn.close()
    return (time.perf_counter() - start) / ROUNDS


def test_raw_key_opens_much_faster_than_a_passphrase(tmp_path, capsys) -> None:
    raw_key = DatabaseKey(bytes(range(32)), KeySource(name="db", label="test"))
    raw_path, phrase_path = tmp_path / "raw.db", tmp_path / "phrase.db"
    conn = connect(raw_path, raw_key)
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    phrase = "PRAGMA key = 'a passphrase'"
    conn = sqlcipher3.connect(str(phrase_path))
    conn.execute(phrase)
    conn.execute("CREATE TABLE t (x)")
    conn.close()

    with_raw = _open_with(raw_path, raw_key.pragma())
    with_phrase = _open_with(phrase_path, phrase)
    with capsys.disabled():
        print(
            f"\nopen+first read: passphrase {with_phrase * 1000:.2f} ms, raw key "
            f"{with_raw * 1000:.3f} ms, ratio {with_phrase / with_raw:.0f}x"
        )
