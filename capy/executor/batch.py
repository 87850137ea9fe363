"""Several shell commands at once, each in its own sandboxed call, results in the given order."""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from capy.executor.cancel import current_cancel
from capy.executor.errors import ExecutorError
from capy.executor.network import isolate, resolve_mode
from capy.executor.result import ExecutionResult
from capy.executor.sandbox import execute, executor_view


def execute_batch(
    commands: list[tuple[str, str]],
    *,
    timeout: float | None = None,
    per_command_timeout: float | None = None,
    concurrency: int | None = None,
    cwd: str | os.PathLike[str] | None = None,
    rules=None,
    progress: Callable[[int, int], None] | None = None,
    network: str | None = None,
) -> list[ExecutionResult]:
    """Run `(label, command)` pairs as shell, `concurrency` at a time (clamped to the pack).

    `timeout` is shared: the whole batch ends by then, and a command that starts late gets only
    what is left. `per_command_timeout` bounds each command on its own. With both, each command
    gets the smaller. `progress(done, total)` is called as each command ends (from worker
    threads). A command that could not run (say, empty) comes back as a failed result
    carrying the error, so one bad entry does not lose the others' output. `network` is every
    command's mode ("on", "off", None for the pack's default); a mode this machine cannot give
    fails the whole batch before any command starts.
    """
    if not commands:
        raise ExecutorError("no commands to run: the batch is empty")
    view = executor_view(rules)
    mode = resolve_mode(network, view.network.default)
    isolate([], mode)
    workers = view.limits.batch.clamp(concurrency)
    # Pool threads do not inherit the caller's context: hand its cancellation over explicitly.
    cancel = current_cancel()
    batch_deadline = (
        None if timeout is None else time.monotonic() + view.limits.timeout.clamp(timeout)
    )

    def run_one(entry: tuple[str, str]) -> ExecutionResult:
        label, command = entry
        if cancel is not None and cancel.is_set():
            return _failed(
                label, "not started: the batch was cancelled", cancelled=True, network=mode.value
            )
        budget = _budget(per_command_timeout, batch_deadline)
        if budget is not None and budget <= 0:
            return _failed(
                label,
                "not started: the batch's shared timeout had passed",
                timed_out=True,
                network=mode.value,
            )
        try:
            result = execute(
                "shell",
                command,
                timeout=budget,
                cwd=cwd,
                rules=view,
                cancel=cancel,
                network=mode.value,
            )
        except ExecutorError as exc:
            return _failed(label, str(exc), network=mode.value)
        return dataclasses.replace(result, label=label)

    finished = 0
    lock = threading.Lock()

    def run_and_count(entry: tuple[str, str]) -> ExecutionResult:
        nonlocal finished
        result = run_one(entry)
        if progress is not None:
            with lock:
                finished += 1
                done = finished
            progress(done, len(commands))
        return result

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="capy-batch") as pool:
        return list(pool.map(run_and_count, commands))


def _budget(per_command: float | None, batch_deadline: float | None) -> float | None:
    budgets = []
    if per_command is not None:
        budgets.append(per_command)
    if batch_deadline is not None:
        budgets.append(batch_deadline - time.monotonic())
    return min(budgets) if budgets else None


def _failed(
    label: str,
    message: str,
    *,
    timed_out: bool = False,
    cancelled: bool = False,
    network: str = "on",
) -> ExecutionResult:
    reason = "timeout" if timed_out else "cancelled" if cancelled else None
    return ExecutionResult(
        language="shell",
        exit_code=None,
        stdout="",
        stderr=message,
        output=message,
        truncated_bytes=0,
        timed_out=timed_out,
        killed_reason=reason,
        pid=None,
        duration_s=0.0,
        soft_failure=False,
        label=label,
        network=network,
    )
