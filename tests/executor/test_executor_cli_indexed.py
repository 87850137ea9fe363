"""`capy execute` answers long output the way the capy_execute tool does, worded for a person:
with --intent the output is indexed and searched for it; without, output over the pack's
index_threshold_bytes is indexed and shown by its start, end and errors. Real `capy`
processes on a noisy command."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

# A noisy run: 5,000 progress lines with one failure and its traceback in the middle.
NOISY = (
    'for i in $(seq 1 2500); do echo "tests/test_orders.py::test_case_$i PASSED"; done; '
    "echo 'tests/test_payments.py::test_refund_rounding FAILED'; "
    "echo 'Traceback (most recent call last):'; "
    "echo '  File \"payments/refund.py\", line 41, in settle'; "
    "echo 'AssertionError: refund was 10.01, expected 10.00'; "
    'for i in $(seq 2501 5000); do echo "tests/test_orders.py::test_case_$i PASSED"; done; '
    "echo '==== 1 failed, 5000 passed in 12.34s ===='"
)


def capy(*args: str, cwd) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "capy", *args], capture_output=True, text=True, cwd=cwd, timeout=180
    )


def test_intent_prints_the_matching_sections_and_a_capy_search_command(project_dir):
    done = capy("execute", "shell", NOISY, "--intent", "refund failure", cwd=project_dir)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "test_refund_rounding FAILED" in out
    assert "AssertionError: refund was 10.01" in out
    assert len(out.encode()) < 8 * 1024  # not the 250 KB the command printed
    assert "test_case_1200 PASSED" not in out
    assert "capy_search" not in out and "include_kinds" not in out
    command = next(line for line in out.splitlines() if line.startswith("Search further:"))
    argv = shlex.split(command.partition("`")[2].rstrip("`"))
    assert argv[:3] == ["capy", "search", "refund failure"]
    # The command it suggests runs and finds the failure.
    again = capy(*argv[1:], cwd=project_dir)
    assert again.returncode == 0, again.stderr
    assert "test_refund_rounding" in again.stdout


def test_without_intent_long_output_shows_start_end_and_errors(project_dir):
    done = capy("execute", "shell", NOISY, cwd=project_dir)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "test_case_1 PASSED" in out and "1 failed, 5000 passed" in out
    assert "AssertionError: refund was 10.01" in out  # listed among the errors
    assert "test_case_2400 PASSED" not in out
    assert "Search further: `capy search '<what you need>' --source execute:shell:" in out
    assert "output shortened" not in done.stderr  # the output was stored whole, not cut


def test_short_output_and_json_stay_whole(project_dir):
    short = capy("execute", "shell", "seq 1 300", cwd=project_dir)
    assert short.stdout == "".join(f"{i}\n" for i in range(1, 301))
    data = json.loads(capy("execute", "shell", NOISY, "--json", cwd=project_dir).stdout)
    # The output itself (cut in the middle past max_returned_bytes), not the indexed answer.
    assert data["output"].startswith("tests/test_orders.py::test_case_1 PASSED\n")
    assert data["output"].endswith("1 failed, 5000 passed in 12.34s ====\n")
    # The output was indexed as well (its cut marker says so): the answer comes along.
    assert data["indexed_answer"].startswith("Indexed ")
    assert (
        json.loads(capy("execute", "shell", "echo hi", "--json", cwd=project_dir).stdout)[
            "indexed_answer"
        ]
        is None
    )


def test_help_no_longer_promises_intent_search_for_later(project_dir):
    done = capy("execute", "--help", cwd=project_dir)
    assert "arrives with the MCP server" not in done.stdout
    assert "searched for it" in done.stdout


def test_a_withheld_short_output_names_a_search_command_that_finds_it_later(project_dir):
    # A short output naming an identifier the output never holds is withheld; the
    # line saying so gives a command that works from a later `capy` process, which searches
    # no ephemeral source unless told to.
    code = 'for i in $(seq 1 20); do echo "setting_$i = enabled on worker $i"; done'
    done = capy("execute", "shell", code, "--intent", "is retry_limit set", cwd=project_dir)
    assert done.returncode == 0, done.stderr
    assert "Not shown:" in done.stdout, done.stdout
    command = done.stdout.partition("search it with `")[2].partition("`")[0]
    argv = shlex.split(command)
    assert argv[:2] == ["capy", "search"] and "--kind" in argv, done.stdout
    argv[argv.index("...")] = "worker"
    again = capy(*argv[1:], cwd=project_dir)
    assert again.returncode == 0, again.stderr
    assert "setting_7 = enabled on worker 7" in again.stdout, again.stdout
