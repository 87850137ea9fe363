"""`capy completion SHELL` prints a script the shell really loads and completes capy with."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest


def _script(shell: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "capy", "completion", shell],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def _bash(script_path, *lines: str) -> subprocess.CompletedProcess[str]:
    program = "\n".join(["set -u", f"source {script_path}", *lines])
    return subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", program],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_bash_script_sources_cleanly_and_completes_commands_and_options(tmp_path) -> None:
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed here")
    path = tmp_path / "capy.bash"
    path.write_text(_script("bash"))
    done = _bash(
        path,
        "complete -p capy",
        'COMP_WORDS=(capy unin); COMP_CWORD=1; _capy; echo "commands: ${COMPREPLY[*]}"',
        'COMP_WORDS=(capy uninstall --d); COMP_CWORD=2; _capy; echo "options: ${COMPREPLY[*]}"',
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "complete -F _capy capy" in done.stdout
    assert "commands: uninstall" in done.stdout
    assert "options: --data --dry-run" in done.stdout


@pytest.mark.parametrize(("shell", "check"), [("zsh", ["zsh", "-n"]), ("fish", ["fish", "-n"])])
def test_zsh_and_fish_scripts_are_printed_and_parse(shell, check, tmp_path) -> None:
    script = _script(shell)
    assert "uninstall" in script and "completion" in script
    if shutil.which(check[0]) is None:
        pytest.skip(f"{shell} is not installed here; the script was printed but not parsed")
    path = tmp_path / f"capy.{shell}"
    path.write_text(script)
    done = subprocess.run([*check, str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_an_unknown_shell_is_one_clear_error() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "capy", "completion", "tcsh"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0
    assert "Traceback" not in done.stdout + done.stderr
    assert '"bash", "zsh", "fish"' in done.stdout + done.stderr
