"""`capy config show`, in-process and as a real subprocess."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from capy.cli import main

if TYPE_CHECKING:
    from tests.config.conftest import Sandbox

SECRET = "sk-db-EXAMPLE-0123456789abcdef"


def collapse_table(text: str) -> str:
    """Columns are padded to the longest cell, and the plain table's rule under the header is
    as wide: collapse both so path length does not matter."""
    text = re.sub(r"([━─])\1+", r"\1", text)
    text = re.sub(r"(?m)^[- ]+$", lambda rule: re.sub(r"-+", "-", rule.group()), text)
    return "\n".join(re.sub(r" {2,}", " ", line).rstrip() for line in text.splitlines())


@pytest.fixture
def configured(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    # Where the database lives and which internal hosts a fetch may reach are the user's to
    # say; a project file may only tighten them (tests/trust covers what it may not do).
    sandbox.write(
        sandbox.user_config,
        'log_level = "info"\ndb_path = "var/knowledge.db"\n'
        '[fetch]\ntimeout = 12.5\nallow_hosts = ["wiki.corp", "10.0.0.0/8"]\n',
    )
    sandbox.write(sandbox.project_config, '[hooks]\nallow_domains = ["docs.corp"]\n')
    sandbox.write(sandbox.project_file, "[fetch]\ntimeout = 10\n[hooks]\nguidance = false\n")
    monkeypatch.setenv("CAPY_DB_KEY", SECRET)
    monkeypatch.setenv("CAPY_HOOKS__SESSION_START_MAX_BYTES", "2048")
    return sandbox


def test_show_table(configured: Sandbox, capsys: pytest.CaptureFixture[str], snapshot) -> None:
    assert main(["config", "show"]) == 0
    out, err = capsys.readouterr()
    assert SECRET not in out
    assert err == ""
    assert collapse_table(configured.normalise(out)) == snapshot


def test_show_json(configured: Sandbox, capsys: pytest.CaptureFixture[str], snapshot) -> None:
    assert main(["config", "show", "--json"]) == 0
    out, _ = capsys.readouterr()
    assert SECRET not in out
    data = json.loads(configured.normalise(out))
    assert data["values"]["db_key"] == {"value": "**********", "source": "CAPY_DB_KEY"}
    assert data == snapshot


def test_show_for_another_project(
    configured: Sandbox, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(configured.home)
    assert main(["config", "show", "--json", "--project", str(configured.project / "src")]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["project_root"] == str(configured.project)
    assert data["values"]["hooks.guidance"]["value"] is False


def test_show_reports_errors_without_traceback(
    sandbox: Sandbox, capsys: pytest.CaptureFixture[str], snapshot
) -> None:
    sandbox.write(sandbox.project_file, '[fetch]\ntimeout = "soon"\ncolour = 1\n')
    assert main(["config", "show"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "Traceback" not in err
    assert sandbox.normalise(err) == snapshot


def test_show_reports_malformed_toml(sandbox: Sandbox, capsys: pytest.CaptureFixture[str]) -> None:
    sandbox.write(sandbox.user_config, "[hooks]\nguidance = tru\n")
    assert main(["config", "show", "--json"]) == 2
    err = sandbox.normalise(capsys.readouterr().err)
    assert err.startswith("capy: <TMP>/home/.config/capy/config.toml:2:12: invalid TOML")


def test_show_json_as_subprocess(configured: Sandbox) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "capy", "config", "show", "--json"],
        cwd=configured.project,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert SECRET not in completed.stdout + completed.stderr
    data = json.loads(completed.stdout)
    values = data["values"]
    assert values["db_key"] == {"value": "**********", "source": "CAPY_DB_KEY"}
    assert values["db_path"]["value"] == str(configured.project / "var" / "knowledge.db")
    assert values["fetch.timeout"]["source"] == str(configured.project_file)
    assert values["hooks.session_start_max_bytes"] == {
        "value": 2048,
        "source": "CAPY_HOOKS__SESSION_START_MAX_BYTES",
    }


def test_subprocess_error_exit_code(sandbox: Sandbox) -> None:
    sandbox.write(sandbox.project_file, "log_level = \n")
    completed = subprocess.run(
        [sys.executable, "-m", "capy", "config", "show"],
        cwd=sandbox.project,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 2
    assert "Traceback" not in completed.stderr
    assert completed.stderr.count("\n") == 1
