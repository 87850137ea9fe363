"""Does the command an agent was given really start? Run it the way the agent would.

An agent starts capy's server and hooks from its own environment: often a desktop launcher or
a shell without capy's virtualenv, so a registration that reads well can still fail with
"command not found" on every tool call. The probe starts the registered program with
`--version` in a clean environment (the platforms pack's `probe_environment`, plus HOME and
nothing else): hook commands through `sh -c` as hosts run them, server commands directly.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass

PROBE_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class Probe:
    shown: str  # the program as the person reads it in their file
    ok: bool
    detail: str  # capy's version, or why it did not start


def probe_server(argv: list[str], tail: list[str], environment: dict[str, str]) -> Probe:
    """Start a registered server's program (its argv without capy's own words) with --version."""
    program = argv[: len(argv) - len(tail)] if tail and argv[-len(tail) :] == tail else argv[:1]
    return _run([*program, "--version"], shlex.join(program), environment, shell=False)


def probe_hook(command: str, tail_words: int, environment: dict[str, str]) -> Probe:
    """Start a registered hook command's program (without `hook --platform P EVENT`) through
    the shell, as the host does, with --version."""
    try:
        words = shlex.split(command)
    except ValueError:
        return Probe(command, False, "the command cannot be split into words")
    program = shlex.join(words[: max(1, len(words) - tail_words)])
    return _run(f"{program} --version", program, environment, shell=True)


def clean_environment(pack_environment: dict[str, str]) -> dict[str, str]:
    """What an agent started without capy's virtualenv has: the pack's variables and HOME."""
    environment = dict(pack_environment)
    if "HOME" in os.environ:
        environment["HOME"] = os.environ["HOME"]
    return environment


def _run(
    command: list[str] | str, shown: str, environment: dict[str, str], *, shell: bool
) -> Probe:
    try:
        done = subprocess.run(
            ["/bin/sh", "-c", command] if shell else command,
            env=environment,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError:
        return Probe(shown, False, "no such program")
    except PermissionError:
        return Probe(shown, False, "the program is not executable")
    except subprocess.TimeoutExpired:
        return Probe(shown, False, f"it did not answer --version within {PROBE_TIMEOUT_S:.0f} s")
    if done.returncode == 0 and done.stdout.strip():
        return Probe(shown, True, done.stdout.strip().splitlines()[0])
    reason = (done.stderr.strip() or done.stdout.strip()).splitlines()
    last = reason[-1] if reason else "no output"
    return Probe(shown, False, f"exit {done.returncode}: {last[:200]}")
