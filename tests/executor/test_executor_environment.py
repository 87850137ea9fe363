"""The sanitised environment: injection variables set in the parent never reach the child."""

from __future__ import annotations

import pytest

from capy.executor import execute
from tests.executor.conftest import require_runtime

SHOW_ENV = "import json, os\nprint(json.dumps(dict(os.environ)))"


@pytest.fixture
def hostile_env(monkeypatch, tmp_path):
    """Every variable here would run attacker code (or print INJECTED) if it got through."""
    payload = tmp_path / "payload"
    payload.write_text("echo INJECTED\n")
    node_payload = tmp_path / "payload.js"
    node_payload.write_text("console.log('INJECTED')\n")
    py_payload = tmp_path / "sitecustomize.py"
    py_payload.write_text("print('INJECTED')\n")
    perl_dir = tmp_path / "perl"
    perl_dir.mkdir()
    (perl_dir / "Inject.pm").write_text('package Inject; print "INJECTED\\n"; 1;\n')
    values = {
        "BASH_ENV": str(payload),
        "ENV": str(payload),
        "LD_PRELOAD": str(tmp_path / "libinject.so"),
        "LD_AUDIT": str(tmp_path / "libaudit.so"),
        "NODE_OPTIONS": f"--require {node_payload}",
        "PYTHONSTARTUP": str(py_payload),
        "PYTHONPATH": str(tmp_path),
        "PYTHONINSPECT": "1",
        "PERL5OPT": "-MInject",
        "PERL5LIB": str(perl_dir),
        "BASH_FUNC_echo%%": "() { builtin echo INJECTED; }",
        "GIT_CONFIG_KEY_0": "core.pager",
        "PAGER": "less",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def test_injection_variables_do_not_reach_python(view, hostile_env) -> None:
    import json

    result = execute("python", SHOW_ENV, rules=view, timeout=20)
    assert "INJECTED" not in result.output and result.exit_code == 0, result.output
    child = json.loads(result.stdout)
    for name in hostile_env:
        if name == "PAGER":
            assert child[name] == "cat"  # stripped, then set by the pack's overrides
        else:
            assert name not in child, name
    assert child["TERM"] == "dumb" and child["NO_COLOR"] == "1"


def test_injection_variables_do_not_reach_shell(view, hostile_env) -> None:
    result = execute(
        "shell", "echo clean; env | grep -c -E '^(BASH_ENV|LD_|ENV=)' || true", rules=view
    )
    assert result.output == "clean\n0\n", result.output


@pytest.mark.parametrize(
    ("language", "code"),
    [("javascript", "console.log('clean')"), ("perl", 'print "clean\\n";')],
)
def test_injection_variables_do_not_reach_node_or_perl(view, hostile_env, language, code) -> None:
    require_runtime(view, language)
    result = execute(language, code, rules=view, timeout=20)
    assert result.output == "clean\n", result.output


def test_credentials_pass_through(view, monkeypatch) -> None:
    import json

    monkeypatch.setenv("GH_TOKEN", "ghp_EXAMPLEEXAMPLEEXAMPLE")
    monkeypatch.setenv("AWS_PROFILE", "staging")
    monkeypatch.setenv("DOTNET_ROOT", "/opt/dotnet")
    monkeypatch.setenv("DOTNET_STARTUP_HOOKS", "/tmp/hook.dll")
    child = json.loads(execute("python", SHOW_ENV, rules=view).stdout)
    assert child["GH_TOKEN"] == "ghp_EXAMPLEEXAMPLEEXAMPLE"
    assert child["AWS_PROFILE"] == "staging"
    assert child["DOTNET_ROOT"] == "/opt/dotnet"  # passthrough beats the DOTNET_ prefix
    assert "DOTNET_STARTUP_HOOKS" not in child


def test_the_marker_cannot_be_spoofed_from_outside(view, monkeypatch) -> None:
    monkeypatch.setenv("CAPY_SANDBOX_ID", "forged")
    monkeypatch.setenv("CAPY_FILE_CONTENT_PATH", "/etc/passwd")
    result = execute(
        "python",
        "import os; print(os.environ['CAPY_SANDBOX_ID'], os.environ.get('CAPY_FILE_CONTENT_PATH'))",
        rules=view,
    )
    assert result.output == f"{result.sandbox_id} None\n"


CAPY_KEYS = {
    "CAPY_DB_KEY": "f0e1d2c3b4a59687f0e1d2c3b4a59687f0e1d2c3b4a59687f0e1d2c3b4a59687",
    "CAPY_VAULT_KEY": "a1B2c3D4e5F6g7H8j9K0a1B2c3D4e5F6g7H8j9K0",
}


def test_capy_keys_and_settings_do_not_reach_the_child(view, monkeypatch) -> None:
    for name, value in CAPY_KEYS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("CAPY_DB_PATH", "/srv/capy/knowledge.db")
    result = execute("shell", "env; printenv CAPY_DB_KEY CAPY_VAULT_KEY || true", rules=view)
    for value in CAPY_KEYS.values():
        assert value not in result.output
    names = {line.split("=", 1)[0] for line in result.output.splitlines() if "=" in line}
    assert {name for name in names if name.startswith("CAPY_")} == {"CAPY_SANDBOX_ID"}


def test_capy_keys_stay_out_even_when_an_overlay_lets_them_through(monkeypatch, tmp_path) -> None:
    """The strip rules are policy a user may relax for CAPY_* settings; the keys never pass."""
    from capy.rules import build_ruleset

    overlay = tmp_path / "keep-capy.yaml"
    overlay.write_text(
        "pack: keep-capy\nschema: overlay.v1\nversion: 1.0.0\n"
        "description: Lets capy's variables through.\n"
        'requires: ">=0.1"\nextends: executor\n'
        "disable: [executor.strip-capy-db-key, executor.strip-capy-vault-key, "
        "executor.strip-prefix-capy]\n"
        "patch:\n  env:\n    passthrough:\n"
        '      - {id: executor.keep-capy-db-key, status: active, since: "0.1.0", '
        "name: CAPY_DB_KEY, description: Kept for the test.}\n",
        encoding="utf-8",
    )
    loose = build_ruleset([(overlay, "user")]).view("executor")
    for name, value in CAPY_KEYS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("CAPY_DB_PATH", "/srv/capy/knowledge.db")
    result = execute("shell", "env", rules=loose)
    assert "CAPY_DB_PATH=/srv/capy/knowledge.db" in result.output  # the overlay took effect
    for value in CAPY_KEYS.values():
        assert value not in result.output
