"""Network modes for sandboxed code: the machine's network, or none at all.

`off` runs the program in a fresh network namespace (Linux `unshare --net`): it holds only a
loopback interface that is down, so every connection fails at once, to the internet and to
services on the machine's own loopback alike. Creating the namespace needs root (or
CAP_SYS_ADMIN); without it, an unprivileged user namespace is tried (`--map-current-user`
keeps the program's user id). What works is tried once per process. Where nothing does, a call
asking for `off` is refused with the reason: it never runs with the network on instead.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from functools import cache

from capy.executor.errors import ExecutorError
from capy.rules.views.executor import NetworkMode

# Tried in order; the first whose trial run succeeds is used.
_ISOLATIONS = (("--net",), ("--net", "--map-current-user"))


def resolve_mode(requested: str | None, default: NetworkMode) -> NetworkMode:
    if requested is None:
        return default
    try:
        return NetworkMode(requested.strip().lower())
    except ValueError:
        raise ExecutorError(
            f"unknown network mode {requested!r}: use 'on' (the machine's network) or 'off' "
            "(no network, loopback included)"
        ) from None


def isolate(argv: list[str], mode: NetworkMode) -> list[str]:
    """`argv` run in the given mode (unchanged for `on`); ExecutorError where `off` cannot be."""
    if mode is NetworkMode.ON:
        return argv
    return [*_offline_prefix(), *argv]


@cache
def _offline_prefix() -> tuple[str, ...]:
    if not sys.platform.startswith("linux"):
        raise _unavailable("it needs Linux network namespaces")
    unshare = shutil.which("unshare")
    if unshare is None:
        raise _unavailable("the `unshare` command (util-linux) is not on PATH")
    for options in _ISOLATIONS:
        prefix = (unshare, *options, "--")
        try:
            done = subprocess.run(
                [*prefix, "true"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=10,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0:
            return prefix
    raise _unavailable(
        "this user may not create a network namespace (it takes root, or unprivileged user "
        "namespaces enabled)"
    )


def _unavailable(reason: str) -> ExecutorError:
    return ExecutorError(
        f"network off is not available here: {reason}. Run the code with network on, or "
        "where network namespaces are allowed."
    )
