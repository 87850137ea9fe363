"""The program `capy setup` writes into an agent's files: one that starts from any shell.

An agent starts the MCP server and every hook from its own environment, which seldom has the
virtualenv capy was installed into on its PATH; a bare `capy` then fails with "command not
found" on every tool call. So setup writes the absolute path of the capy that is running it
(the console script a pip, pipx or uv tool install puts on PATH, symlinks kept so an upgrade of
the tool still lands), or the interpreter with `-m capy` when no script exists, or what the
person chose with `--command`.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from capy.setup.documents import SetupError

SCRIPT_NAMES = ("capy", "capy.exe")


def resolve_launcher(chosen: str | None = None) -> list[str]:
    """The argv that starts capy; `chosen` is the person's `--command`, split like a shell."""
    if chosen is not None:
        return _chosen(chosen)
    script = _running_script() or _script_beside_interpreter()
    if script is not None:
        return [script]
    return [os.path.abspath(sys.executable), "-m", "capy"]


def hook_launcher(launcher: list[str]) -> list[str]:
    """The argv setup writes before a hook's own words (`hook --platform P EVENT`).

    For the launcher setup picks by itself, the interpreter runs a one-line start in isolated
    mode without `site` (`-I -S -c`): a hook is a fresh process on every tool call, and the
    console script pip writes imports `re` before capy runs (half a bare start), while `site`
    scans site-packages and runs their .pth files. The start puts capy's folder at the end of
    the path (after the standard library, so nothing shadows it) and site-packages come back on
    the first import that needs them (capy.entry.run_lean); `-I` keeps the agent's working
    folder and PYTHON* variables out of the path. It is `-c`, not a script file: once capy is
    uninstalled, Python exits 2 for a script it cannot open, which agents read as "block this
    call", while a failed import exits 1, an error they show and go past, as they do for a
    console script that is gone. A launcher the person chose with `--command` is written as
    they gave it.
    """
    if os.name != "posix" or launcher != resolve_launcher():
        return launcher
    import capy

    folder = json.dumps(str(Path(capy.__file__).resolve().parent.parent))
    return [os.path.abspath(sys.executable), "-I", "-S", "-c", LEAN_START.format(folder=folder)]


# The folder is written as a JSON string, which is a Python literal too, in double quotes:
# shlex quotes the whole line in single quotes, and agents keep it in JSON files.
LEAN_START = "import sys;sys.path.append({folder});from capy.entry import run_lean;run_lean()"
LEAN_MARK = "from capy.entry import run_lean"


def _chosen(chosen: str) -> list[str]:
    try:
        argv = shlex.split(chosen)
    except ValueError as error:
        raise SetupError(
            f"--command {chosen!r} cannot be split into words ({error}); quote it as a shell "
            "would. Nothing was written."
        ) from None
    if not argv:
        raise SetupError(
            "--command is empty; give the program that starts capy. Nothing was written."
        )
    return argv


def _running_script() -> str | None:
    """The console script this process was started through (`capy setup`), made absolute."""
    argv0 = sys.argv[0] if sys.argv else ""
    if Path(argv0).name not in SCRIPT_NAMES:
        return None  # `python -m capy`, or capy run as a library
    if os.sep not in argv0:
        from shutil import which

        found = which(argv0)
        return os.path.abspath(found) if found else None
    path = os.path.abspath(argv0)
    return path if os.access(path, os.X_OK) else None


def _script_beside_interpreter() -> str | None:
    """The console script the install put next to this interpreter (`python -m capy setup`)."""
    folder = Path(os.path.abspath(sys.executable)).parent
    for name in SCRIPT_NAMES:
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def is_capy_program(argv: list[str]) -> bool:
    """Whether an argv starts with a launcher setup writes by default: a capy script anywhere,
    an interpreter with `-m capy`, or one running capy's lean hook start. (`uvx --from
    capy-mcp capy serve` written by hand is the user's own.)"""
    return bool(argv) and (
        Path(argv[0]).name in SCRIPT_NAMES
        or argv[1:3] == ["-m", "capy"]
        or (argv[1:4] == ["-I", "-S", "-c"] and LEAN_MARK in "".join(argv[4:5]))
    )
