"""`execute_file` (the file never enters the result) and batches of shell commands."""

from __future__ import annotations

import time

import pytest

from capy.executor import ExecutorError, execute_batch, execute_file
from tests.executor.conftest import require_runtime, tuned

SECRET_LINE = "db_password=EXAMPLE-not-a-real-secret"

SUMMARISERS = {
    "python": "print(len(FILE_CONTENT.splitlines()), FILE_CONTENT_PATH.endswith('app.log'))",
    "shell": (
        'printf "%s %s\\n" "$(printf "%s\\n" "$FILE_CONTENT" | wc -l | tr -d " ")" '
        '"$(case "$FILE_CONTENT_PATH" in *app.log) echo True;; esac)"'
    ),
    "javascript": (
        "console.log(FILE_CONTENT.trimEnd().split('\\n').length, "
        "FILE_CONTENT_PATH.endsWith('app.log') ? 'True' : 'False')"
    ),
    "perl": (
        "my $n = () = $FILE_CONTENT =~ /\\n/g; "
        'print "$n ", ($FILE_CONTENT_PATH =~ /app\\.log$/ ? "True" : "False"), "\\n";'
    ),
}


@pytest.fixture
def log_file(project_dir):
    path = project_dir / "app.log"
    path.write_text("".join(f"line {n}\n" for n in range(41)) + SECRET_LINE + "\n")
    return path


@pytest.mark.parametrize("language", sorted(SUMMARISERS))
def test_file_content_is_injected_and_stays_out_of_the_result(
    language: str, view, log_file, project_dir
) -> None:
    require_runtime(view, language)
    result = execute_file("app.log", language, SUMMARISERS[language], rules=view, cwd=project_dir)
    assert result.exit_code == 0, result.output
    assert result.output == "42 True\n"
    assert SECRET_LINE not in result.output + result.stdout + result.stderr


def test_unreadable_file_is_a_clear_error(view, project_dir) -> None:
    with pytest.raises(ExecutorError, match=r"cannot read .*missing\.log: no such file"):
        execute_file("missing.log", "python", "print(1)", rules=view, cwd=project_dir)


def test_batch_keeps_the_given_order(view) -> None:
    commands = [(f"c{n}", f"sleep 0.{9 - n}; echo {n}") for n in range(6)]
    results = execute_batch(commands, concurrency=6, rules=view)
    assert [result.label for result in results] == [label for label, _ in commands]
    assert [result.output for result in results] == [f"{n}\n" for n in range(6)]


def test_batch_runs_concurrently_within_the_packs_bounds(view) -> None:
    commands = [(str(n), "sleep 0.5") for n in range(8)]
    started = time.monotonic()
    execute_batch(commands, concurrency=100, rules=view)  # clamped to the pack's 8
    assert time.monotonic() - started < 2.5
    started = time.monotonic()
    execute_batch(commands[:3], concurrency=0, rules=view)  # clamped to 1: one at a time
    assert time.monotonic() - started >= 1.5


def test_batch_per_command_and_shared_timeouts(view) -> None:
    small = tuned(view, grace=0.2)
    results = execute_batch(
        [("fast", "echo ok"), ("slow", "sleep 30")], per_command_timeout=0.5, rules=small
    )
    assert results[0].output == "ok\n" and not results[0].timed_out
    assert results[1].timed_out
    started = time.monotonic()
    results = execute_batch(
        [("a", "sleep 30"), ("b", "echo never")], timeout=0.5, concurrency=1, rules=small
    )
    assert results[0].timed_out and results[1].timed_out
    assert "not started" in results[1].output
    assert time.monotonic() - started < 3


def test_a_bad_entry_does_not_lose_the_others(view) -> None:
    results = execute_batch([("empty", "  "), ("fine", "echo fine")], rules=view)
    assert results[0].exit_code is None and "empty" in results[0].output
    assert results[1].output == "fine\n"


def test_empty_batch_is_an_error(view) -> None:
    with pytest.raises(ExecutorError, match="batch is empty"):
        execute_batch([], rules=view)
