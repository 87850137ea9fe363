"""Where the vault and its key live: beside the knowledge bases, CAPY_VAULT_PATH, --path."""

from __future__ import annotations

import pytest

from capy.store.errors import KeyFileError
from capy.vault import locate_vault, open_vault


def test_default_vault_sits_in_the_data_dir_with_its_own_key_file(project_dir):
    from capy.config.paths import config_dir, data_dir

    location = locate_vault()
    assert location.path == data_dir() / "vault.db"
    assert location.key_source.key_file == config_dir() / "vault.key"
    with open_vault() as vault:
        assert vault.path.is_file()
    assert (config_dir() / "vault.key").is_file()
    assert not (config_dir() / "db.key").exists()  # the knowledge base's key is not touched


def test_environment_selects_the_file_and_the_key(tmp_path, monkeypatch):
    monkeypatch.setenv("CAPY_VAULT_PATH", str(tmp_path / "elsewhere.db"))
    monkeypatch.setenv("CAPY_VAULT_KEY", "d" * 64)
    location = locate_vault()
    assert location.path == tmp_path / "elsewhere.db"
    assert location.key_source.label == "CAPY_VAULT_KEY"
    assert locate_vault(tmp_path / "flag.db").path == tmp_path / "flag.db"  # --path wins


def test_a_lost_key_file_is_an_error_not_a_new_key(vault_path):
    with open_vault(vault_path) as vault:
        key_file = vault.location.key_source.key_file
    key_file.unlink()
    with pytest.raises(KeyFileError, match="CAPY_VAULT_KEY"):
        open_vault(vault_path)
    assert not key_file.exists()
