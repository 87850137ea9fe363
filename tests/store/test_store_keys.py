"""Keys: zero-config key file, environment overrides, unsafe key files, racing first use."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest

from capy.store import KeyFileError, WrongKeyError, open_store
from capy.store.database import SQLITE_HEADER, connect
from capy.store.keys import DatabaseKey, KeySource, key_from_text, key_source, load_key

HEX_KEY = "a1" * 32


def test_first_open_creates_private_key_file_and_encrypted_database(env) -> None:
    with open_store() as store:
        store.conn.execute(
            "INSERT INTO sources (label, kind, content_hash, content_type, raw, raw_size) "
            "VALUES ('notes', 'durable', 'h', 'plaintext', x'00', 1)"
        )
    assert stat.S_IMODE(env.key_file.stat().st_mode) == 0o600
    assert len(env.key_file.read_text().strip()) == 64
    header = env.db_path.read_bytes()[:16]
    assert header != SQLITE_HEADER
    with open_store() as store:  # reopening finds the same key and the row
        assert store.conn.execute("SELECT label FROM sources").fetchall() == [("notes",)]


def test_env_key_overrides_key_file(env, monkeypatch) -> None:
    monkeypatch.setenv("CAPY_DB_KEY", HEX_KEY)
    env.add_source("from-env")
    assert not env.key_file.exists()  # nothing generated when a key is configured
    key = DatabaseKey(bytes.fromhex(HEX_KEY), KeySource(name="db", label="test"))
    assert env.labels(key) == ["from-env"]


def test_passphrase_key_is_stretched_once_and_stable(env, monkeypatch) -> None:
    monkeypatch.setenv("CAPY_DB_KEY", "correct horse battery staple")
    env.add_source("with-passphrase")
    with open_store() as store:
        assert store.key.source.label == "CAPY_DB_KEY"
        assert store.conn.execute("SELECT count(*) FROM sources").fetchone() == (1,)
    assert key_from_text("correct horse battery staple", "db") != key_from_text(
        "correct horse battery staple", "vault"
    )
    assert key_from_text(f"x'{HEX_KEY}'", "db") == bytes.fromhex(HEX_KEY)


def test_wrong_env_key_is_reported_and_file_untouched(env, monkeypatch) -> None:
    env.add_source("kept")
    before = env.db_path.read_bytes()
    monkeypatch.setenv("CAPY_DB_KEY", HEX_KEY)
    with pytest.raises(WrongKeyError) as caught:
        open_store()
    assert "CAPY_DB_KEY" in caught.value.message
    assert env.db_path.read_bytes() == before
    assert not list(env.db_path.parent.glob("*.corrupt-*"))
    monkeypatch.delenv("CAPY_DB_KEY")
    assert env.labels() == ["kept"]


def test_key_never_appears_in_repr(env) -> None:
    key = load_key(key_source("db", None, env.key_file.parent))
    assert key.raw.hex() not in repr(key)
    assert key.raw.hex() not in repr(key.source)


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604], ids=oct)
def test_key_file_readable_by_others_is_refused(env, mode, snapshot) -> None:
    open_store().close()
    env.key_file.chmod(mode)
    with pytest.raises(KeyFileError) as caught:
        open_store()
    assert env.normalise(caught.value.message) == snapshot


@pytest.mark.parametrize("content", ["abc123", "a1" * 33, "zz" * 32, ""])
def test_key_file_with_wrong_content_is_refused(env, content) -> None:
    env.key_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(env.key_file, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, content.encode())
    os.close(fd)
    with pytest.raises(KeyFileError, match="does not hold a 256-bit key"):
        open_store()


def test_missing_key_file_for_existing_database_is_not_regenerated(env, snapshot) -> None:
    env.add_source("precious")
    env.key_file.unlink()
    with pytest.raises(KeyFileError) as caught:
        open_store()
    assert not env.key_file.exists()
    assert env.normalise(caught.value.message) == snapshot


RACE = """
import sys, time
from pathlib import Path
from capy.store.keys import load_or_create_key_file
start = float(sys.argv[2])
while time.time() < start:
    pass
print(load_or_create_key_file(Path(sys.argv[1])).hex())
"""


def test_processes_racing_on_first_use_share_one_key(env) -> None:
    import time

    path = env.key_file
    start = str(time.time() + 1.0)
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", RACE, str(path), start], stdout=subprocess.PIPE, text=True
        )
        for _ in range(8)
    ]
    keys = {process.communicate(timeout=60)[0].strip() for process in processes}
    assert keys == {path.read_text().strip()}
    assert not [name for name in os.listdir(path.parent) if name.endswith(".tmp")]


def test_vault_key_uses_its_own_file_and_variable(env, monkeypatch) -> None:
    source = key_source("vault", None, env.key_file.parent)
    assert source.key_file == env.key_file.parent / "vault.key"
    assert source.env_var == "CAPY_VAULT_KEY"
    vault = load_key(source)
    db = load_key(key_source("db", None, env.key_file.parent))
    assert vault.raw != db.raw
    conn = connect(env.home / "vault.db", vault)
    conn.execute("CREATE TABLE t (x)")
    conn.close()


@pytest.mark.parametrize(
    ("name", "advice"),
    [
        ("db", "rotate it with `capy encrypt --rotate`"),
        ("vault", "rotate it with `capy vault rekey --rotate`"),
        ("capsules", "capy cannot rotate the capsules key"),
    ],
)
def test_an_exposed_key_file_names_what_rotates_that_key(env, name, advice) -> None:
    """`capy encrypt --rotate` re-keys only the knowledge base: the vault's key file and the
    capsule log's must not send the user there."""
    source = key_source(name, None, env.key_file.parent)
    load_key(source)
    source.key_file.chmod(0o644)
    with pytest.raises(KeyFileError) as caught:
        load_key(source)
    assert advice in caught.value.message
