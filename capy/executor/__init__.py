"""The polyglot sandbox: run a snippet in a subprocess and bring back a bounded result.

Each call gets its own temp dir, session and process group, a sanitised environment, closed
stdin, a timeout that kills everything it started, and an output cap. Lists, limits and
language recipes all come from the executor pack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capy.lazy import lazy_exports

if TYPE_CHECKING:
    from capy.executor.background import jobs, shutdown_background, stop_job
    from capy.executor.batch import execute_batch
    from capy.executor.errors import ExecutorError
    from capy.executor.result import ExecutionResult
    from capy.executor.runtimes import RuntimeStatus, detect_runtimes
    from capy.executor.sandbox import execute, execute_file

_HOMES = {
    "execute": "sandbox",
    "execute_file": "sandbox",
    "execute_batch": "batch",
    "ExecutionResult": "result",
    "ExecutorError": "errors",
    "RuntimeStatus": "runtimes",
    "detect_runtimes": "runtimes",
    "jobs": "background",
    "shutdown_background": "background",
    "stop_job": "background",
}

__all__ = [
    "ExecutionResult",
    "ExecutorError",
    "RuntimeStatus",
    "detect_runtimes",
    "execute",
    "execute_batch",
    "execute_file",
    "jobs",
    "shutdown_background",
    "stop_job",
]


__getattr__ = lazy_exports(__name__, {name: f"{__name__}.{home}" for name, home in _HOMES.items()})
