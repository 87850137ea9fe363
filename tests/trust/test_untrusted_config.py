"""A project's `.capy/config.toml` and `.capy.toml` may not move the keys, the key file or the
data, nor open the SSRF guard, unless the user trusts the project; they may still tighten."""

from __future__ import annotations

import json
import logging

import pytest

from capy.cli import main
from capy.config import load_settings
from capy.config.paths import config_dir, data_dir

MOVE_EVERYTHING = """\
data_dir = "capy-data"
db_path = "kb.db"
vault_path = "vault.db"
capsules_path = "capsules.db"
key_dir = ".keys"
[rules]
extra_dirs = ["evil-rules"]
disabled_packs = ["security"]
[fetch]
allow_hosts = ["127.0.0.1", "169.254.0.0/16"]
timeout = 600
"""


def test_a_project_config_cannot_move_keys_data_or_open_the_guard(project_dir, caplog):
    (project_dir / ".capy.toml").write_text(MOVE_EVERYTHING)
    with caplog.at_level(logging.WARNING, logger="capy.trust"):
        resolved = load_settings(project_dir)
    settings = resolved.settings
    assert settings.data_dir == data_dir() and settings.key_dir == config_dir()
    assert settings.db_path is None and settings.vault_path is None
    assert settings.capsules_path is None
    assert settings.rules.extra_dirs == () and settings.rules.disabled_packs == ()
    assert settings.fetch.allow_hosts == () and settings.fetch.timeout == 30.0
    ignored = {item.name: item for item in resolved.ignored}
    assert sorted(ignored) == [
        "capsules_path",
        "data_dir",
        "db_path",
        "fetch.allow_hosts",
        "fetch.timeout",
        "key_dir",
        "rules.disabled_packs",
        "rules.extra_dirs",
        "vault_path",
    ]
    assert ignored["fetch.timeout"].reasons == ("raises fetch.timeout from 30.0 to 600.0",)
    assert resolved.provenance["key_dir"] == "default"
    lines = [r.getMessage() for r in caplog.records if r.name == "capy.trust"]
    assert len(lines) == len(ignored)
    assert f"capy ignored key_dir from {project_dir / '.capy.toml'}: it changes key_dir" in (
        "\n".join(lines)
    )


def test_the_database_and_key_file_stay_out_of_the_working_tree(project_dir, capsys):
    """The real path: `capy index` creates the encrypted store and its key file."""
    (project_dir / ".capy").mkdir()
    (project_dir / ".capy" / "config.toml").write_text(
        'db_path = "leak/knowledge.db"\nkey_dir = "leak"\n'
    )
    note = project_dir / "notes.md"
    note.write_text("# Deploy\nThe deploy runs from the release branch.\n")
    assert main(["index", str(note)]) == 0
    capsys.readouterr()
    assert main(["which", "--json"]) == 0
    where = json.loads(capsys.readouterr().out)
    assert where["exists"] is True
    assert not where["path"].startswith(str(project_dir))
    assert not (project_dir / "leak").exists()
    assert (config_dir() / "db.key").is_file()


def test_a_project_config_may_tighten(project_dir):
    (project_dir / ".capy.toml").write_text("[fetch]\ntimeout = 5\nallow_hosts = []\n")
    resolved = load_settings(project_dir)
    assert resolved.settings.fetch.timeout == 5.0
    assert resolved.ignored == ()
    assert resolved.provenance["fetch.timeout"] == str(project_dir / ".capy.toml")


def test_a_user_config_and_the_environment_are_not_judged(project_dir, monkeypatch):
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.toml").write_text('[fetch]\nallow_hosts = ["wiki.corp"]\n')
    monkeypatch.setenv("CAPY_FETCH__TIMEOUT", "300")
    resolved = load_settings(project_dir)
    assert resolved.settings.fetch.allow_hosts == ("wiki.corp",)
    assert resolved.settings.fetch.timeout == 300.0
    # A project may narrow the user's allow list, not widen it.
    (project_dir / ".capy.toml").write_text('[fetch]\nallow_hosts = ["wiki.corp", "10.0.0.1"]\n')
    assert load_settings(project_dir).settings.fetch.allow_hosts == ("wiki.corp",)
    (project_dir / ".capy.toml").write_text("[fetch]\nallow_hosts = []\n")
    assert load_settings(project_dir).settings.fetch.allow_hosts == ()


def test_trust_applies_the_project_config_until_it_changes(project_dir, trust_project, capsys):
    config = project_dir / ".capy.toml"
    config.write_text('key_dir = ".keys"\n[fetch]\nallow_hosts = ["127.0.0.1"]\n')
    assert load_settings(project_dir).settings.key_dir == config_dir()
    assert trust_project() == 0
    capsys.readouterr()
    trusted = load_settings(project_dir)
    assert trusted.settings.key_dir == project_dir / ".keys"
    assert trusted.settings.fetch.allow_hosts == ("127.0.0.1",)
    assert trusted.ignored == ()
    config.write_text(config.read_text() + "# edited\n")
    assert load_settings(project_dir).settings.key_dir == config_dir()
    assert main(["trust", "--list", "--json"]) == 0
    [entry] = json.loads(capsys.readouterr().out)["projects"]
    assert entry["matches"] is False and entry["files"] == [".capy.toml"]


def test_config_show_lists_the_ignored_keys(project_dir, capsys):
    (project_dir / ".capy.toml").write_text('key_dir = ".keys"\n')
    assert main(["config", "show", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["values"]["key_dir"]["source"] == "default"
    [item] = shown["ignored"]
    assert item["name"] == "key_dir" and item["file"] == str(project_dir / ".capy.toml")


# A loosening value for every settings key marked tighten_only, as a project file would set it.
# A key marked without a row here fails the first test: each guarded key is tested.
LOOSER_VALUES = {
    "data_dir": '"moved"',
    "db_path": '"moved.db"',
    "vault_path": '"moved-vault.db"',
    "capsules_path": '"moved-capsules.db"',
    "key_dir": '"moved-keys"',
    "rules.extra_dirs": '["moved-rules"]',
    "rules.disabled_packs": '["security"]',
    "fetch.allow_hosts": '["10.9.8.7"]',
    "fetch.timeout": "599",
    "redaction.replies": "false",
    "llm.base_url": '"http://198.51.100.7/v1"',
    "llm.model": '"their-model"',
    "llm.timeout": "599",
}


def test_every_guarded_settings_key_has_a_loosening_case():
    from capy.config.project_limits import project_directions

    assert sorted(".".join(key) for key in project_directions()) == sorted(LOOSER_VALUES)


@pytest.mark.parametrize("key", sorted(LOOSER_VALUES))
def test_a_project_file_loosening_any_guarded_key_is_ignored(project_dir, key):
    section, _, name = key.rpartition(".")
    line = f"{name} = {LOOSER_VALUES[key]}\n"
    (project_dir / ".capy.toml").write_text(f"[{section}]\n{line}" if section else line)
    resolved = load_settings(project_dir)
    assert [item.name for item in resolved.ignored] == [key]
    assert resolved.provenance[key] == "default"
