from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from capy.config import LogLevel, load_settings

if TYPE_CHECKING:
    from tests.config.conftest import Sandbox

# The layers above the built-in defaults, lowest precedence first.
LAYERS = ("user", "project-config", "project-file", "environment")


def _write_layers(sandbox: Sandbox, count: int, toml_line: str, env_name: str, values: list[str]):
    """Set one field in the first `count` layers above the defaults, each to its own value."""
    files = [sandbox.user_config, sandbox.project_config, sandbox.project_file]
    environ = sandbox.environ()
    sources = ["default"]
    for index in range(count):
        if index < len(files):
            sandbox.write(files[index], toml_line.format(value=values[index]))
            sources.append(str(files[index]))
        else:
            environ[env_name] = values[index].strip('"')
            sources.append(env_name)
    return environ, sources[-1]


@pytest.mark.parametrize("count", range(len(LAYERS) + 1))
def test_log_level_precedence(sandbox: Sandbox, count: int) -> None:
    values = ['"debug"', '"info"', '"error"', "critical"]
    environ, source = _write_layers(
        sandbox, count, "log_level = {value}\n", "CAPY_LOG_LEVEL", values
    )
    resolved = load_settings(sandbox.project, environ)
    expected = ["WARNING", "DEBUG", "INFO", "ERROR", "CRITICAL"][count]
    assert resolved.settings.log_level is LogLevel(expected)
    assert resolved.provenance["log_level"] == source


@pytest.mark.parametrize("count", range(len(LAYERS) + 1))
def test_nested_field_precedence(sandbox: Sandbox, count: int) -> None:
    # Each layer lowers the timeout: a project file may only tighten it.
    values = ["4", "3", "2", "1"]
    environ, source = _write_layers(
        sandbox, count, "[fetch]\ntimeout = {value}\n", "CAPY_FETCH__TIMEOUT", values
    )
    resolved = load_settings(sandbox.project, environ)
    assert resolved.settings.fetch.timeout == [30.0, 4.0, 3.0, 2.0, 1.0][count]
    assert resolved.provenance["fetch.timeout"] == source


def test_every_layer_contributes_and_tables_deep_merge(sandbox: Sandbox) -> None:
    sandbox.write(sandbox.user_config, "[fetch]\ntimeout = 5\n[hooks]\nguidance = false\n")
    sandbox.write(sandbox.project_config, '[hooks]\nallow_domains = ["wiki.corp"]\n')
    sandbox.write(sandbox.project_file, "[hooks]\nsession_start_max_bytes = 100\n")
    environ = sandbox.environ(CAPY_RULES__DISABLED_PACKS="routing")
    resolved = load_settings(sandbox.project, environ)

    settings = resolved.settings
    assert settings.fetch.timeout == 5.0
    assert settings.hooks.allow_domains == ("wiki.corp",)
    assert settings.hooks.guidance is False
    assert settings.hooks.session_start_max_bytes == 100
    assert settings.rules.disabled_packs == ("routing",)
    assert resolved.provenance == {
        "data_dir": "default",
        "db_path": "default",
        "vault_path": "default",
        "capsules_path": "default",
        "db_key": "default",
        "vault_key": "default",
        "capsules_key": "default",
        "key_dir": "default",
        "log_level": "default",
        "rules.extra_dirs": "default",
        "rules.disabled_packs": "CAPY_RULES__DISABLED_PACKS",
        "fetch.allow_hosts": "default",
        "fetch.timeout": str(sandbox.user_config),
        "hooks.guidance": str(sandbox.user_config),
        "hooks.session_start_max_bytes": str(sandbox.project_file),
        "hooks.allow_commands": "default",
        "hooks.capture": "default",
        "hooks.allow_domains": str(sandbox.project_config),
        "redaction.replies": "default",
        "llm.base_url": "default",
        "llm.model": "default",
        "llm.api_key": "default",
        "llm.timeout": "default",
    }


def test_defaults_follow_xdg_from_the_given_environ(sandbox: Sandbox) -> None:
    environ = sandbox.environ(XDG_DATA_HOME=str(sandbox.root / "data"))
    settings = load_settings(sandbox.project, environ).settings
    assert settings.data_dir == sandbox.root / "data" / "capy"
    assert settings.key_dir == sandbox.home / ".config" / "capy"
    assert settings.db_path is None
    assert settings.fetch.allow_hosts == ()
    assert settings.hooks.guidance is True


def test_user_config_respects_xdg_config_home(sandbox: Sandbox) -> None:
    config_home = sandbox.root / "xdg"
    sandbox.write(config_home / "capy" / "config.toml", 'log_level = "info"\n')
    resolved = load_settings(sandbox.project, sandbox.environ(XDG_CONFIG_HOME=str(config_home)))
    assert resolved.settings.log_level is LogLevel.INFO
    assert resolved.provenance["log_level"] == str(config_home / "capy" / "config.toml")


def test_nested_env_lists_accept_commas_and_json(sandbox: Sandbox) -> None:
    environ = sandbox.environ(
        CAPY_FETCH__ALLOW_HOSTS="Build.Internal, 10.1.0.0/16,fd00::1",
        CAPY_RULES__EXTRA_DIRS='["/opt/capy-rules", "team-rules"]',
    )
    settings = load_settings(sandbox.project, environ).settings
    assert settings.fetch.allow_hosts == ("build.internal", "10.1.0.0/16", "fd00::1")
    assert settings.rules.extra_dirs == (Path("/opt/capy-rules"), sandbox.project / "team-rules")


def test_whole_section_as_json_env(sandbox: Sandbox) -> None:
    resolved = load_settings(sandbox.project, sandbox.environ(CAPY_HOOKS='{"guidance": false}'))
    assert resolved.settings.hooks.guidance is False
    assert resolved.provenance["hooks.guidance"] == "CAPY_HOOKS"


def test_env_names_are_case_insensitive_and_empty_means_unset(sandbox: Sandbox) -> None:
    sandbox.write(sandbox.project_file, "[fetch]\ntimeout = 9\n")
    environ = sandbox.environ(capy_log_level="error", CAPY_FETCH__TIMEOUT="")
    resolved = load_settings(sandbox.project, environ)
    assert resolved.settings.log_level is LogLevel.ERROR
    assert resolved.provenance["log_level"] == "capy_log_level"
    assert resolved.settings.fetch.timeout == 9.0


def test_relative_paths_resolve_against_project_root(sandbox: Sandbox) -> None:
    sandbox.write(sandbox.user_config, 'db_path = "var/knowledge.db"\nvault_path = "~/vault.db"\n')
    nested = sandbox.project / "src" / "deep"
    nested.mkdir(parents=True)
    resolved = load_settings(nested, sandbox.environ())
    assert resolved.project_root == sandbox.project
    assert resolved.settings.db_path == sandbox.project / "var" / "knowledge.db"
    assert resolved.settings.vault_path == sandbox.home / "vault.db"


def test_keys_come_from_env_and_stay_secret(sandbox: Sandbox) -> None:
    environ = sandbox.environ(CAPY_DB_KEY="hunter2-EXAMPLE", CAPY_VAULT_KEY="vault-EXAMPLE")
    resolved = load_settings(sandbox.project, environ)
    assert resolved.settings.db_key is not None
    assert resolved.settings.db_key.get_secret_value() == "hunter2-EXAMPLE"
    assert "hunter2" not in repr(resolved.settings)
    shown = {entry.key: entry.value for entry in resolved.entries()}
    assert shown["db_key"] == shown["vault_key"] == "**********"
    assert resolved.provenance["vault_key"] == "CAPY_VAULT_KEY"


def test_user_config_may_hold_keys(sandbox: Sandbox) -> None:
    sandbox.write(sandbox.user_config, 'db_key = "user-EXAMPLE"\n')
    resolved = load_settings(sandbox.project, sandbox.environ())
    assert resolved.settings.db_key is not None
    assert resolved.provenance["db_key"] == str(sandbox.user_config)


def test_settings_are_frozen(sandbox: Sandbox) -> None:
    settings = load_settings(sandbox.project, sandbox.environ()).settings
    with pytest.raises(ValueError):
        settings.log_level = LogLevel.DEBUG  # type: ignore[misc]
    with pytest.raises(ValueError):
        settings.fetch.timeout = 1  # type: ignore[misc]


def test_defaults_to_cwd_and_process_environment(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CAPY_HOOKS__GUIDANCE", "false")
    sandbox.write(sandbox.project_file, 'log_level = "debug"\n')
    resolved = load_settings()
    assert resolved.project_root == sandbox.project
    assert resolved.settings.hooks.guidance is False
    assert resolved.settings.log_level is LogLevel.DEBUG


def test_replies_are_redacted_unless_the_user_turns_it_off(sandbox: Sandbox) -> None:
    assert load_settings(sandbox.project, sandbox.environ()).settings.redaction.replies is True
    sandbox.write(sandbox.user_config, "[redaction]\nreplies = false\n")
    assert load_settings(sandbox.project, sandbox.environ()).settings.redaction.replies is False


def test_one_process_loads_the_same_inputs_once(sandbox: Sandbox) -> None:
    """The store, the rule loader and the redactor each ask; each ask once validated again."""
    first = load_settings(sandbox.project, sandbox.environ())
    assert load_settings(sandbox.project, sandbox.environ()) is first
    changed = load_settings(sandbox.project, sandbox.environ(CAPY_LOG_LEVEL="debug"))
    assert changed is not first and changed.settings.log_level is LogLevel.DEBUG
    sandbox.write(sandbox.project_file, 'log_level = "error"\n')
    assert load_settings(sandbox.project, sandbox.environ()).settings.log_level is LogLevel.ERROR


def test_trusting_the_project_is_seen_by_the_next_load(sandbox: Sandbox) -> None:
    from capy.trust.store import trust

    environ = sandbox.environ()
    sandbox.write(sandbox.project_file, "[fetch]\ntimeout = 600\n")
    assert load_settings(sandbox.project, environ).settings.fetch.timeout == 30.0
    trust(sandbox.project, environ)
    assert load_settings(sandbox.project, environ).settings.fetch.timeout == 600.0
