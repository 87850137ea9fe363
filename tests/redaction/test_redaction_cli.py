"""`capy redact [FILE | -] [--report] [--json]`: redacted text on stdout, byte for byte; the
report on stderr with rule ids and counts, never a secret; bad input is one line, exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from cyclopts import App

GITHUB = "ghp_a1B2c3D4e5F6g7H8j9K0a1B2c3D4e5F6g7H8"
SLACK = "xoxb-8675309124-8675309124-a1B2c3D4e5F6g7H8j9K0a1B2"
LOG = (
    f"build started\nexport GITHUB_TOKEN={GITHUB}\nGITHUB_TOKEN again: {GITHUB}\n"
    f"slack: {SLACK}\ndone\n"
).encode()
# Registered here by the same import path as in capy's COMMANDS table, so the test runs the
# command exactly as `capy redact` does without depending on that table.
APP_SOURCE = """
import sys
from cyclopts import App
app = App(name="capy", result_action="return_value")
app.command("capy.cli.redact:redact", name="redact")
sys.exit(app(sys.argv[1:]))
"""


def make_app() -> App:
    app = App(name="capy", result_action="return_value")
    app.command("capy.cli.redact:redact", name="redact")
    return app


def run(capsysbinary, *argv: str) -> tuple[int, bytes, str]:
    code = make_app()(list(argv))
    out, err = capsysbinary.readouterr()
    return code, out, err.decode()


@pytest.fixture
def log_file(tmp_path):
    path = tmp_path / "build.log"
    path.write_bytes(LOG)
    return path


def test_redacts_a_file_to_stdout(capsysbinary, log_file, snapshot):
    code, out, err = run(capsysbinary, "redact", str(log_file))
    assert (code, err) == (0, "")
    assert GITHUB.encode() not in out and SLACK.encode() not in out
    assert out.decode() == snapshot


def test_report_lists_rule_ids_and_counts_never_secrets(capsysbinary, log_file, snapshot):
    code, _, err = run(capsysbinary, "redact", str(log_file), "--report")
    assert code == 0
    assert GITHUB not in err and SLACK not in err
    assert err == snapshot


def test_json_report(capsysbinary, log_file):
    code, _, err = run(capsysbinary, "redact", str(log_file), "--json")
    report = json.loads(err)
    assert code == 0
    assert report["rules"] == {"secrets.github-pat": 2, "secrets.slack-bot-token": 1}
    assert report["redacted"] == 3


def test_nothing_found_is_said_and_the_text_is_unchanged(capsysbinary, tmp_path):
    path = tmp_path / "clean.txt"
    path.write_bytes(b"all quiet\n")
    code, out, err = run(capsysbinary, "redact", str(path), "--report")
    assert (code, out, err) == (0, b"all quiet\n", "no secrets found\n")


def test_invalid_utf8_passes_through_byte_for_byte(capsysbinary, tmp_path):
    path = tmp_path / "mixed.bin"
    path.write_bytes(b"\xff\xfe head\n" + LOG + b"\x80 tail")
    code, out, _ = run(capsysbinary, "redact", str(path))
    assert code == 0
    assert out.startswith(b"\xff\xfe head\n") and out.endswith(b"\x80 tail")
    assert GITHUB.encode() not in out


@pytest.mark.parametrize("name", ["missing.log", "."])
def test_unreadable_input_is_one_line_and_exit_2(capsysbinary, tmp_path, name, snapshot):
    target = tmp_path / name if name != "." else tmp_path
    code, out, err = run(capsysbinary, "redact", str(target))
    assert (code, out) == (2, b"")
    assert err.count("\n") == 1 and err.startswith("capy: ")
    assert err.replace(str(tmp_path), "<tmp>") == snapshot


def test_reads_stdin_in_a_real_process():
    done = subprocess.run(
        [sys.executable, "-c", APP_SOURCE, "redact", "-", "--report"],
        input=LOG,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert GITHUB.encode() not in done.stdout
    assert b"[REDACTED:secrets.github-pat]" in done.stdout
    assert b"secrets.github-pat" in done.stderr and GITHUB.encode() not in done.stderr
