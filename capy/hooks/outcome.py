"""What a hook answers: a platform-neutral verdict, and the process result it renders to.

Plain classes rather than dataclasses: `dataclasses` pulls in `inspect` and `ast`, which on
the per-tool-call path costs more than all of capy's own hook code.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ALLOW = "allow"
DENY = "deny"
ASK = "ask"


class HookOutcome:
    """The hook's whole effect: what goes to stdout and stderr, and the exit code."""

    __slots__ = ("exit_code", "stderr", "stdout")

    def __init__(self, stdout: str = "", stderr: str = "", exit_code: int = 0):
        self.stdout = stdout
        self.stderr = stderr
        self.exit_code = exit_code

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, HookOutcome):
            return NotImplemented
        return (self.stdout, self.stderr, self.exit_code) == (
            other.stdout,
            other.stderr,
            other.exit_code,
        )

    def __hash__(self) -> int:
        return hash((self.stdout, self.stderr, self.exit_code))

    def __repr__(self) -> str:
        return (
            f"HookOutcome(stdout={self.stdout!r}, stderr={self.stderr!r}, "
            f"exit_code={self.exit_code!r})"
        )


PASS_THROUGH = HookOutcome()


def pass_through(problem: str) -> HookOutcome:
    """Let the call go on untouched and say why in one line (never the payload itself)."""
    line = " ".join(problem.split())
    return HookOutcome(stderr=f"capy hook: {line}; the call goes on unchanged\n")


class Verdict:
    """A handler's answer in canonical terms; the platform adapter renders it.

    `decision` None means the handler does not decide; `updated_input` uses canonical names.
    """

    __slots__ = ("context", "decision", "reason", "rule_id", "updated_input")

    def __init__(
        self,
        decision: str | None = None,
        reason: str | None = None,
        *,
        updated_input: dict[str, Any] | None = None,
        context: str | None = None,
        rule_id: str | None = None,
    ):
        self.decision = decision
        self.reason = reason
        self.updated_input = updated_input
        self.context = context
        self.rule_id = rule_id
