"""What one sandboxed call returns."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ExecutionResult:
    """One call's outcome.

    `stdout` and `stderr` are the full decoded streams (up to the hard cap), for indexing;
    `output` is what goes back to the agent: both streams in arrival order, cut to its head
    and tail with a marker when long (`truncated_bytes` says how much was cut).
    `exit_code` follows the shell: 128 + N when signal N ended the process, None while a
    background job still runs. `killed_reason` is "timeout", "output-cap", "process-limit",
    "memory-limit" or "cancelled" when capy (or the kernel, for memory) stopped the call.
    `soft_failure` is an exit the language's `soft_failure` rule in the executor pack reads as
    a result, not a crash (shell: exit 1 that printed something, the way grep says "no match"
    or a linter says "found issues"). `network` is the mode the code ran in: "on" (the
    machine's network) or "off" (none, loopback included).
    """

    language: str
    exit_code: int | None
    stdout: str
    stderr: str
    output: str
    truncated_bytes: int
    timed_out: bool
    killed_reason: str | None
    pid: int | None
    duration_s: float
    soft_failure: bool
    invalid_utf8: bool = False
    binary: bool = False
    background: bool = False
    sandbox_id: str = ""
    runtime: str = ""
    label: str | None = None
    network: str = "on"

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and self.killed_reason is None
