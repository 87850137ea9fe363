"""`capy policy check`: what a person debugging their settings sees, in-process and through a
real subprocess."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from capy.cli.policy import app


def run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = app(argv, result_action="return_value")
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def configured(settings):
    settings.write(
        "project",
        deny=["Bash(git push:*)", "Read(./.env)"],
        ask=["Bash(npm publish:*)"],
        allow=["Bash(npm run test:*)", "Bash(git status)", "WebFetch(domain:example.com)"],
    )
    return settings


CHECKS = [
    ["check", "rm -rf /"],
    ["check", "git status && npm run test -- --ci"],
    ["check", "git status; git push --force"],
    ["check", "npm publish"],
    ["check", "git status && make"],
    ["check", "--path", "config/.env"],
    ["check", "--tool", "Grep", "--path", "src"],
    ["check", "--url", "https://example.com/docs?q=1"],
    ["check", "--tool", "WebFetch", "--url", "not a url"],
    ["check", "--language", "python", 'import os\nos.system("sudo rm -rf /")'],
    ["check", "--language", "ruby", "puts 'no shell here'"],
]


def test_check_text_output(configured, capsys, snapshot):
    transcript = []
    for argv in [[*argv, "--managed-dir", str(configured.managed)] for argv in CHECKS]:
        code, out, err = run(argv, capsys)
        assert (code, err) == (0, "")
        shown = out.replace(str(configured.project), "<project>")
        transcript.append(f"$ capy policy {' '.join(argv[:-2])}\n{shown}")
    assert "\n".join(transcript) == snapshot


def test_check_json_output(configured, capsys, snapshot):
    argv = ["check", "--json", "--managed-dir", str(configured.managed), "cd app && git push"]
    code, out, _ = run(argv, capsys)
    assert code == 0
    assert json.loads(out) == snapshot


@pytest.mark.parametrize(
    "argv",
    [
        ["check"],
        ["check", "--tool", "Read"],
        ["check", "--tool", "Read", "ls"],
        ["check", "--language", "cobol", "DISPLAY 'HI'."],
    ],
    ids=["no-command", "no-path", "command-for-read", "unknown-language"],
)
def test_bad_input_is_one_line(configured, capsys, snapshot, argv):
    code, out, err = run([*argv, "--managed-dir", str(configured.managed)], capsys)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err == snapshot


def test_broken_settings_warn_on_stderr(settings, capsys, snapshot):
    settings.write("project", text="{not json")
    settings.write("local", deny=["Bash(rm -rf"], allow=["Bash(ls)"])
    code, out, err = run(["check", "ls", "--managed-dir", str(settings.managed)], capsys)
    assert code == 0
    assert {"out": out, "err": err} == snapshot


def test_command_from_stdin(configured, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("git status\ngit push origin main\n"))
    code, out, _ = run(["check", "-", "--managed-dir", str(configured.managed)], capsys)
    assert code == 0
    assert out.startswith("deny\n  rule   Bash(git push:*)")


def test_check_through_a_real_subprocess(configured):
    script = "from capy.cli.policy import app; app()"
    argv = ["check", "--json", "--managed-dir", str(configured.managed), "sudo rm -rf / && ls"]
    result = subprocess.run(
        [sys.executable, "-c", script, *argv],
        capture_output=True,
        text=True,
        cwd=configured.project,
        env=os.environ.copy(),
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    decision = json.loads(result.stdout)
    assert decision["decision"] == "deny"
    assert decision["rule"] == "security.deny-sudo-rm-rf-root"
    assert decision["source"] == "rules/security.yaml"
