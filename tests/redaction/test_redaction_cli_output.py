"""What the real `capy` CLI prints for a person: secrets redacted, terminal controls visible.

Every printer goes through `capy.cli.output` (`say`, `error_line`, `print_json`); these run
the installed entry point in a subprocess, on fresh fake secrets of several detector kinds.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.planted_secrets import (
    KEY_CUTS,
    fake_private_key,
    fresh_secrets,
    key_body_lines,
    log_cut_inside_key,
    log_lines,
    planted_text,
    raw_in,
)

# OSC 52 (clipboard write), OSC 0 (window title), CSI 2J (clear screen), C1 CSI, a bidi
# override and a lone carriage return: what stored content must not do to a terminal.
HOSTILE = "a\x1b]52;c;aGk=\x07b \x1b]0;owned\x07 \x1b[2J c\x9bd \u202ee\rf"
CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e", "\r")


def capy(*args: str, stdin: str | None = None, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "capy", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )


def test_execute_redacts_its_output_in_text_and_json(project_dir) -> None:
    found = fresh_secrets()
    (project_dir / "print.sh").write_text(f"cat <<'EOF'\n{planted_text(found)}\nEOF\n")
    text = capy("execute", "shell", "sh print.sh")
    as_json = capy("execute", "--json", "shell", "sh print.sh")
    assert text.returncode == 0 and as_json.returncode == 0, text.stderr + as_json.stderr
    assert "[REDACTED:secrets.github-pat]" in text.stdout
    assert raw_in(text.stdout + text.stderr + as_json.stdout + as_json.stderr, found) == []
    assert "[REDACTED:secrets.github-pat]" in json.loads(as_json.stdout)["output"]


def test_execute_opt_outs_show_secrets_and_say_so(project_dir) -> None:
    token = fresh_secrets()["github"]
    flag = capy("execute", "--show-secrets", "shell", f"echo {token}")
    setting = capy("execute", "shell", f"echo {token}", CAPY_REDACTION__REPLIES="false")
    assert flag.stdout == f"{token}\n" and setting.stdout == f"{token}\n"
    assert "Secrets were NOT redacted here (--show-secrets was given)" in flag.stderr
    assert "(the setting redaction.replies is off)" in setting.stderr


def test_execute_shows_no_capy_key(project_dir) -> None:
    db_key, vault_key = "f0e1d2c3" * 8, fresh_secrets()["password"]
    run = capy(
        "execute", "shell", "env; printenv CAPY_DB_KEY CAPY_VAULT_KEY; echo end",
        CAPY_DB_KEY=db_key, CAPY_VAULT_KEY=vault_key,
    )  # fmt: skip
    assert run.stdout.endswith("end\n") and "CAPY_SANDBOX_ID=" in run.stdout
    assert db_key not in run.stdout and vault_key not in run.stdout


def test_search_shows_labels_and_snippets_redacted_and_controls_visible(project_dir) -> None:
    found = fresh_secrets()
    token = found["github"]
    content = f"deploy notes {HOSTILE}\n{planted_text(found)}\n"
    indexed = capy("index", "-", "--source", f"notes {token}", stdin=content)
    assert indexed.returncode == 0, indexed.stderr
    text = capy("search", "deploy notes")
    as_json = capy("search", "--json", "deploy notes")
    by_label = capy("search", "--source", f"notes {token}", "deploy")
    cleanup = capy("cleanup", "--source", f"notes {token}")
    everything = "".join(
        run.stdout + run.stderr for run in (indexed, text, as_json, by_label, cleanup)
    )
    assert raw_in(everything, found) == []
    assert "notes [REDACTED:secrets.github-pat]" in text.stdout  # the label, stored redacted
    assert "1 hit" in by_label.stdout and "would remove 1 source" in cleanup.stdout
    for control in CONTROLS:
        assert control not in text.stdout + as_json.stdout, repr(control)
    assert "\\u001b]52;c;aGk=\\u0007b" in text.stdout
    hit = json.loads(as_json.stdout)["queries"][0]["hits"][0]
    assert "\x9b" in hit["snippet"] and "\u202e" in hit["snippet"]  # JSON keeps the data


def test_stats_shows_no_secret_from_a_path(project_dir, tmp_path) -> None:
    token = fresh_secrets()["github"]
    db = str(tmp_path / token / "knowledge.db")
    capy("index", "-", "--source", "x", stdin="some content\n", CAPY_DB_PATH=db)
    text = capy("stats", CAPY_DB_PATH=db)
    as_json = capy("stats", "--json", CAPY_DB_PATH=db)
    assert text.returncode == 0 and as_json.returncode == 0, text.stderr + as_json.stderr
    assert token not in text.stdout + as_json.stdout
    assert "[REDACTED:secrets.github-pat]" in json.loads(as_json.stdout)["knowledge_base"]["path"]


def test_an_error_line_shows_no_secret(project_dir) -> None:
    token = fresh_secrets()["stripe"]
    run = capy("index", f"missing/{token}.txt")
    assert run.returncode != 0 and run.stderr.startswith("capy: ")
    assert token not in run.stderr and "[REDACTED:" in run.stderr


TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8j9K0a1B2c3D4e5F6g7H8"


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(before=st.text(max_size=80), after=st.text(max_size=80))
def test_shown_text_holds_no_secret_and_no_control(project_dir, before: str, after: str) -> None:
    from capy.cli.output import shown

    text = shown(f"{before} {TOKEN} {after}")
    assert TOKEN not in text
    assert not any(char in text for char in CONTROLS[:-1]) and "\r" not in text.replace("\r\n", "")


@pytest.mark.parametrize(("side", "place"), KEY_CUTS)
def test_execute_cut_inside_a_private_key_prints_no_key_line(project_dir, side, place) -> None:
    """The middle cut falls inside a key: redaction saw the whole output first, so neither the
    head's last lines nor the tail's first ones give any of it away, in text or JSON."""
    from capy.rules import build_ruleset

    limits = build_ruleset().view("executor").limits.output
    key = fake_private_key()
    log = log_cut_inside_key(key, side=side, place=place, limits=limits)
    (project_dir / "long.log").write_text(log, encoding="utf-8")
    text = capy("execute", "shell", "cat long.log")
    as_json = capy("execute", "--json", "shell", "cat long.log")
    assert text.returncode == 0 and as_json.returncode == 0, text.stderr + as_json.stderr
    # Long output is indexed (redacted whole before it is stored); its start and end shown.
    assert text.stdout.startswith("Indexed ") and "### End of the output" in text.stdout
    everything = text.stdout + text.stderr + as_json.stdout + as_json.stderr
    assert [line for line in key_body_lines(key) if line in everything] == []
    output = json.loads(as_json.stdout)["output"]
    assert output.startswith(log[:1000]) and output.endswith(log[-1000:])
    assert_cut_counted(output, whole=_redacted(log), limits=limits)


def test_execute_shows_a_cut_key_when_asked(project_dir) -> None:
    """--show-secrets is the one way to see it; the cut is then of the program's own output."""
    from capy.rules import build_ruleset

    limits = build_ruleset().view("executor").limits.output
    key = fake_private_key()
    log = log_cut_inside_key(key, side="tail", place="body", limits=limits)
    (project_dir / "long.log").write_text(log, encoding="utf-8")
    run = capy("execute", "--show-secrets", "shell", "cat long.log")
    assert run.returncode == 0, run.stderr
    assert key_body_lines(key)[-1] in run.stdout
    assert_cut_counted(run.stdout, whole=log, limits=limits)


def assert_cut_counted(shown: str, *, whole: str, limits) -> None:
    """The marker's counts are those of what was cut from `whole`, the text before the cut."""
    found = re.search(r"\[([\d,]+) bytes, ([\d,]+) lines omitted", shown)
    assert found, shown[:200]
    omitted, lines = (int(group.replace(",", "")) for group in found.groups())
    head, tail = shown.split(limits.marker(omitted, lines))
    assert len(head.encode()) + omitted + len(tail.encode()) == len(whole.encode())
    assert whole.startswith(head) and whole.endswith(tail)


def _redacted(text: str) -> str:
    from capy.security.redaction import redact

    return redact(text).text


def test_a_background_tail_starting_inside_a_key_prints_no_key_line(project_dir) -> None:
    """A background job keeps only its last `buffer_bytes`: when they start inside a key, the
    key's START is gone before anything can redact it; the tail detector knows the fragment."""
    from capy.rules import build_ruleset

    keep = build_ruleset().view("executor").limits.background.buffer_bytes
    key = fake_private_key()
    kept_of_key = len(key) - len(key) // 2  # the ring starts in the middle of the key
    log = log_lines(200_000) + key + "\n" + log_lines(keep - kept_of_key - 1)
    (project_dir / "long.log").write_text(log, encoding="utf-8")
    run = capy("execute", "--background", "--timeout", "1", "shell", "sleep 2; cat long.log")
    assert run.returncode == 0, run.stderr
    assert len(run.stdout.encode()) < keep  # the kept tail, its key part masked
    assert [line for line in key_body_lines(key) if line in run.stdout] == []
