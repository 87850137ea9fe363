"""The fork-bomb cap that the OS offers: RLIMIT_NPROC, set in the child before exec.

RLIMIT_NPROC counts every process and thread of the user, not only the sandbox's, so the limit
is the machine's current task count (an upper bound of the user's, read cheaply from
/proc/loadavg) plus the pack's allowance. Linux exempts root and holders of CAP_SYS_RESOURCE or
CAP_SYS_ADMIN from it entirely, so for root capy skips it (it would only cost the fast vfork
spawn path) and relies on the process-count watchdog and the sweep in `processes`.
"""

from __future__ import annotations

import os
from collections.abc import Callable

try:
    import resource
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]


def _machine_tasks() -> int | None:
    try:
        with open("/proc/loadavg", encoding="ascii") as handle:
            return int(handle.read().split()[3].split("/")[1])
    except (OSError, IndexError, ValueError):
        return None


def nproc_limiter(max_new_processes: int) -> Callable[[], None] | None:
    """A preexec function lowering RLIMIT_NPROC for the child, or None where it cannot apply."""
    if resource is None or not hasattr(resource, "RLIMIT_NPROC") or os.getuid() == 0:
        return None
    current = _machine_tasks()
    if current is None:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    wanted = current + max_new_processes
    # Never raise a limit the user already has.
    for existing in (soft, hard):
        if existing != resource.RLIM_INFINITY:
            wanted = min(wanted, existing)
    limit = (wanted, hard)

    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_NPROC, limit)

    return apply
