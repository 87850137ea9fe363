"""Ordinary calls: languages present here, working directories, exit codes, bad input."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from capy.executor import ExecutorError, execute
from capy.executor.runtimes import clear_cache
from tests.executor.conftest import require_runtime

HELLO = {
    "python": 'print("hello from python")',
    "shell": 'echo "hello from shell"',
    "javascript": 'console.log("hello from javascript")',
    "perl": 'print "hello from perl\\n";',
    "rust": 'println!("hello from rust");',
    "ruby": 'puts "hello from ruby"',
    "go": 'fmt.Println("hello from go")',
    "php": 'echo "hello from php\\n";',
    "typescript": 'console.log("hello from typescript")',
    "r": 'cat("hello from r\\n")',
    "elixir": 'IO.puts("hello from elixir")',
}


@pytest.mark.parametrize("language", sorted(HELLO))
@pytest.mark.usefixtures("real_toolchains")
def test_hello_in_every_installed_language(language: str, view) -> None:
    require_runtime(view, language)
    result = execute(language, HELLO[language], rules=view, timeout=120)
    assert result.exit_code == 0, result.output
    assert result.output == f"hello from {language}\n"
    assert result.killed_reason is None and not result.timed_out and result.pid is None


def test_shell_runs_in_the_project_dir_and_python_in_its_temp_dir(view, project_dir) -> None:
    shell = execute("shell", "pwd", rules=view, cwd=project_dir)
    assert Path(shell.stdout.strip()) == project_dir.resolve()
    python = execute("python", "import os; print(os.getcwd())", rules=view, cwd=project_dir)
    scratch = Path(python.stdout.strip())
    # Its own folder: the call's own `capy-call` where calls are isolated (see `private`).
    assert scratch.name.startswith(("capy-exec-", "capy-call")), scratch
    assert scratch != project_dir.resolve()


def test_stdout_and_stderr_are_kept_apart_and_combined_in_order(view) -> None:
    code = "import sys\nprint('one', flush=True)\nprint('two', file=sys.stderr, flush=True)\n"
    result = execute("python", code, rules=view)
    assert (result.stdout, result.stderr) == ("one\n", "two\n")
    assert result.output == "one\ntwo\n"


def test_shell_exit_1_with_output_is_a_soft_failure(view) -> None:
    grep_like = execute("shell", "echo 'found: 3 issues'; exit 1", rules=view)
    assert grep_like.exit_code == 1 and grep_like.soft_failure
    silent = execute("shell", "exit 1", rules=view)
    assert silent.exit_code == 1 and not silent.soft_failure
    crash = execute("python", "print('x'); raise SystemExit(1)", rules=view)
    assert not crash.soft_failure


def test_signal_deaths_exit_128_plus_the_signal(view) -> None:
    result = execute("shell", "kill -9 $$", rules=view)
    assert result.exit_code == 137


def test_code_reading_stdin_gets_end_of_file(view) -> None:
    result = execute("python", "import sys\nprint(repr(sys.stdin.read()))", rules=view, timeout=5)
    assert result.output == "''\n" and not result.timed_out
    shell = execute("shell", 'read line; echo "status $?"', rules=view, timeout=5)
    assert shell.output == "status 1\n"


def test_binary_and_invalid_utf8_output_is_replaced_and_flagged(view) -> None:
    result = execute("shell", r"printf 'ok\377\000end\n'", rules=view)
    assert result.binary and result.invalid_utf8
    assert result.output == "ok\ufffd\x00end\n"


def test_a_one_megabyte_command_runs(view) -> None:
    body = "\n".join(f": filler line {number:07} {'x' * 40}" for number in range(20_000))
    code = body + "\necho done\n"
    assert len(code.encode()) > 1_000_000
    result = execute("shell", code, rules=view)
    assert result.exit_code == 0 and result.output == "done\n"


def test_long_output_comes_back_as_head_and_tail(view) -> None:
    result = execute("python", "for i in range(100000): print('row', i)", rules=view)
    assert result.truncated_bytes > 0
    assert result.output.startswith("row 0\n") and result.output.endswith("row 99999\n")
    assert "bytes, " in result.output and "lines omitted" in result.output
    assert len(result.output.encode()) < view.limits.output.max_returned_bytes + 200
    assert result.stdout.count("\n") == 100_000  # the full output stays available for indexing


@pytest.mark.parametrize(
    ("language", "code"),
    [("cobol", "DISPLAY 'HI'"), ("", "x"), ("python", ""), ("python", "  \n\t"), ("sh", "\n")],
)
def test_bad_input_is_one_clear_sentence(language: str, code: str, view, snapshot) -> None:
    with pytest.raises(ExecutorError) as caught:
        execute(language, code, rules=view)
    assert str(caught.value) == snapshot


def test_missing_runtime_names_what_to_install(view, monkeypatch, tmp_path, snapshot) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    clear_cache()
    try:
        with pytest.raises(ExecutorError) as caught:
            execute("python", "print(1)", rules=view)
    finally:
        clear_cache()
    assert str(caught.value) == snapshot


def test_missing_working_directory_is_an_error(view, tmp_path) -> None:
    with pytest.raises(ExecutorError, match="does not exist"):
        execute("shell", "pwd", rules=view, cwd=tmp_path / "gone")


def test_timeout_is_clamped_to_the_packs_ceiling(view) -> None:
    assert view.limits.timeout.clamp(10**9) == view.limits.timeout.max_seconds
    assert view.limits.timeout.clamp(None) == view.limits.timeout.default_seconds


def test_language_aliases_resolve(view) -> None:
    for alias in ("sh", "bash", "py", "python3"):
        assert (
            execute(
                alias, "echo hi" if alias in ("sh", "bash") else "print('hi')", rules=view
            ).output
            == "hi\n"
        )
    assert os.environ.get("CAPY_SANDBOX_ID") is None
