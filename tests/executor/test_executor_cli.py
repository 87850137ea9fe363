"""`capy execute`, driven through a cyclopts app the way `capy/cli/__init__.py` registers it."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from cyclopts import App

RUNNER = """
import sys
from cyclopts import App
app = App(name="capy", result_action="return_value")
app.command("capy.cli.execute:execute", name="execute")
sys.exit(app(sys.argv[1:]))
"""


def run_cli(argv: list[str]) -> int:
    app = App(name="capy", result_action="return_value")
    app.command("capy.cli.execute:execute", name="execute")
    return app(["execute", *argv])


def test_prints_the_output_and_returns_the_exit_code(capsys) -> None:
    assert run_cli(["shell", "echo hi; exit 3"]) == 3
    out, err = capsys.readouterr()
    assert (out, err) == ("hi\n", "")


def test_status_lines_go_to_stderr(capsys, snapshot) -> None:
    assert run_cli(["shell", "echo partial; sleep 30", "--timeout", "0.3"]) == 143
    out, err = capsys.readouterr()
    assert out == "partial\n"
    assert re.sub(r"\d+\.\d s", "N s", err) == snapshot


@pytest.mark.parametrize(
    "argv", [["cobol", "x"], ["python", ""], ["python", "   "]], ids=["language", "empty", "blank"]
)
def test_bad_input_is_one_line_and_exit_2(argv, capsys, snapshot) -> None:
    assert run_cli(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err == snapshot


def test_json_output_leaves_out_the_raw_streams(capsys) -> None:
    assert run_cli(["python", "print('x')", "--json", "--intent", "find x"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["output"] == "x\n" and data["intent"] == "find x"
    assert "stdout" not in data and "stderr" not in data


def test_code_from_standard_input_in_a_real_process(tmp_path) -> None:
    for argv in (["execute", "python", "-"], ["execute", "python"]):
        done = subprocess.run(
            [sys.executable, "-c", RUNNER, *argv],
            input="print(6 * 7)\n",
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, "42\n", "")


def test_code_starting_with_a_hyphen_is_code(capsys) -> None:
    assert run_cli(["shell", "-no-such-command"]) == 127  # bash ran it: command not found
    assert "command not found" in capsys.readouterr().out


def test_non_utf8_standard_input_is_refused(tmp_path, snapshot) -> None:
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, "execute", "shell"],
        input=b"echo \xff\n",
        capture_output=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert done.stderr.decode() == snapshot


def test_permission_policies_apply_before_anything_runs(capsys, snapshot) -> None:
    assert run_cli(["shell", "rm -rf /"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == snapshot
    code = "import os\nos.system('rm -rf /')"
    assert run_cli(["python", code]) == 2
    assert "security.deny-rm-rf-root" in capsys.readouterr().err


def test_ask_rules_need_yes(capsys, project_dir) -> None:
    settings = project_dir / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"ask": ["Bash(echo:*)"]}}))
    assert run_cli(["shell", "echo careful"]) == 2
    assert "--yes" in capsys.readouterr().err
    assert run_cli(["shell", "echo careful", "--yes"]) == 0
    assert capsys.readouterr().out == "careful\n"
