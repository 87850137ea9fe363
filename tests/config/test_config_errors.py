"""What a person sees when a config file or variable is wrong: located, one line each."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from capy.config import ConfigError, load_settings

if TYPE_CHECKING:
    from tests.config.conftest import Sandbox


def _error(sandbox: Sandbox, **variables: str) -> str:
    with pytest.raises(ConfigError) as caught:
        load_settings(sandbox.project, sandbox.environ(**variables))
    return sandbox.normalise(caught.value.message)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('log_level = "info"\n[fetch]\ntimeout = \n', id="missing-value"),
        pytest.param("[fetch\ntimeout = 3\n", id="unclosed-table"),
        pytest.param('log_level = "info\n', id="unterminated-string"),
        pytest.param('log_level = "a"\nlog_level = "b"\n', id="duplicate-key"),
    ],
)
def test_malformed_toml_names_file_and_line(sandbox: Sandbox, snapshot, text: str) -> None:
    sandbox.write(sandbox.project_file, text)
    message = _error(sandbox)
    assert message.startswith("<TMP>/project/.capy.toml:")
    assert len(message.splitlines()) == 1
    assert message == snapshot


def test_malformed_toml_at_end_of_file(sandbox: Sandbox, snapshot) -> None:
    sandbox.write(sandbox.user_config, 'log_level = "info')
    assert _error(sandbox) == snapshot


def test_unreadable_file(sandbox: Sandbox, snapshot) -> None:
    sandbox.project_config.parent.mkdir()
    sandbox.project_config.write_bytes(b"log_level = '\xff\xfe'\n")
    assert _error(sandbox) == snapshot


def test_unknown_keys_name_file_and_key(sandbox: Sandbox, snapshot) -> None:
    sandbox.write(sandbox.user_config, "[fetch]\nallow_host = []\n")
    sandbox.write(sandbox.project_file, "colour = true\n[hooks]\nbudget = 1\n")
    message = _error(sandbox)
    assert "<TMP>/home/.config/capy/config.toml: fetch.allow_host: unknown key" in message
    assert message == snapshot


def test_wrong_types_name_file_and_key(sandbox: Sandbox, snapshot) -> None:
    sandbox.write(
        sandbox.project_config,
        'log_level = 3\nfetch = "fast"\n[hooks]\nguidance = "perhaps"\n'
        "session_start_max_bytes = -1\n[rules]\ndisabled_packs = 7\n",
    )
    assert _error(sandbox) == snapshot


def test_bad_values_are_reported_even_when_overridden(sandbox: Sandbox, snapshot) -> None:
    sandbox.write(sandbox.user_config, "[fetch]\ntimeout = 0\n")
    sandbox.write(sandbox.project_file, "[fetch]\ntimeout = 10\n")
    assert _error(sandbox) == snapshot


def test_bad_hosts(sandbox: Sandbox, snapshot) -> None:
    sandbox.write(
        sandbox.project_file, '[fetch]\nallow_hosts = ["https://wiki.corp/", "bad host"]\n'
    )
    assert _error(sandbox) == snapshot


def test_env_errors_name_the_variable(sandbox: Sandbox, snapshot) -> None:
    message = _error(
        sandbox,
        CAPY_FETCH__TIMEOUT="soon",
        CAPY_FETCH__ALLOW_HOST="x",
        CAPY_LOG_LEVEL="loud",
    )
    assert message == snapshot


def test_env_section_that_is_not_json(sandbox: Sandbox, snapshot) -> None:
    assert _error(sandbox, CAPY_FETCH="{timeout: 3") == snapshot


def test_keys_are_refused_in_project_files_and_never_echoed(sandbox: Sandbox, snapshot) -> None:
    sandbox.write(sandbox.project_file, 'db_key = "leaked-EXAMPLE"\n')
    sandbox.write(sandbox.project_config, "vault_key = 12345\n")
    message = _error(sandbox)
    assert "leaked-EXAMPLE" not in message
    assert "12345" not in message
    assert message == snapshot
