"""`capy which | checkpoint | dbsize | encrypt`, in-process and as a real subprocess."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest

from capy.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_which_prints_the_path(env, capsys) -> None:
    code, out, err = run(capsys, "which")
    assert (code, err) == (0, "")
    assert out.strip() == str(env.db_path)
    assert not env.db_path.exists()  # asking where it is creates nothing
    assert not env.key_file.exists()


def test_which_json(env, capsys, snapshot) -> None:
    code, out, _ = run(capsys, "which", "--json")
    assert code == 0
    assert env.normalise(out) == snapshot
    env.add_source("x")
    assert json.loads(run(capsys, "which", "--json")[1])["exists"] is True


def test_db_option_and_env_variable(env, capsys, monkeypatch) -> None:
    code, out, _ = run(capsys, "which", "--db", "elsewhere.db")
    assert code == 0
    assert out.strip() == str(env.project / "elsewhere.db")
    monkeypatch.setenv("CAPY_DB_PATH", str(env.home / "from-env.db"))
    assert run(capsys, "which")[1].strip() == str(env.home / "from-env.db")
    assert run(capsys, "checkpoint", "--db", "other.db")[0] == 0
    assert (env.project / "other.db").is_file()


def test_checkpoint_and_dbsize(env, capsys, snapshot) -> None:
    env.add_source("sized", body=b"y" * 10_000)
    code, out, _ = run(capsys, "checkpoint")
    assert code == 0 and out.startswith("checkpointed ")
    code, out, _ = run(capsys, "dbsize", "--json")
    report = json.loads(out)
    assert code == 0
    assert {table["name"]: table["rows"] for table in report["tables"]} == snapshot
    assert report["wal_bytes"] == 0
    code, out, _ = run(capsys, "dbsize")
    assert code == 0 and "sources" in out and "WAL" in out


def test_errors_are_one_line_and_exit_2(env, capsys, monkeypatch, snapshot) -> None:
    env.add_source("secret stuff")
    monkeypatch.setenv("CAPY_DB_KEY", "f6" * 32)
    code, out, err = run(capsys, "dbsize")
    assert code == 2 and out == ""
    assert env.normalise(err) == snapshot
    assert "f6" * 32 not in err


def test_plaintext_then_encrypt(env, capsys, snapshot) -> None:
    env.db_path.parent.mkdir(parents=True)
    plain = sqlite3.connect(env.db_path)
    plain.execute("CREATE TABLE notes (body TEXT)")
    plain.commit()
    plain.close()
    code, _, err = run(capsys, "checkpoint")
    assert code == 2 and "capy encrypt" in err
    code, out, err = run(capsys, "encrypt")
    assert (code, err) == (0, "")
    assert env.normalise(out) == snapshot
    assert run(capsys, "checkpoint")[0] == 0


def test_encrypt_rotate_and_new_key_file(env, capsys) -> None:
    env.add_source("kept")
    assert run(capsys, "encrypt")[0] == 2  # already encrypted, no new key: nothing done
    code, out, _ = run(capsys, "encrypt", "--rotate")
    assert code == 0 and "now holds the new key" in out
    new_key = env.project / "new.key"
    new_key.write_text("a passphrase, stretched once\n")
    code, out, _ = run(capsys, "encrypt", "--new-key-file", str(new_key))
    assert code == 0
    assert env.labels() == ["kept"]  # the key file follows the rotation
    key_hex = env.key_file.read_text().strip()
    assert key_hex not in out


@pytest.mark.parametrize("argv", [["which"], ["which", "--json"]])
def test_which_as_a_real_subprocess(env, argv) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "capy", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ.copy(),
        check=False,
    )
    assert result.returncode == 0, result.stderr
    if argv == ["which"]:
        assert result.stdout.strip() == str(env.db_path)
    else:
        assert json.loads(result.stdout)["path"] == str(env.db_path)
