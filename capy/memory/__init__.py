"""Memory: rules, anti-patterns, preferences and principles learned from sessions, as a
projection of the capsule log.

    from capy.capsules import open_capsules
    from capy.memory import learn

    with open_capsules() as store:
        report = learn(store)           # new capsules since the last run
        report = learn(store, rebuild=True)  # everything, from capsules alone

- `capy.memory.signals`: a session's capsules read as actions, sentences, edits, operations.
- `capy.memory.learning` and `capy.memory.gate`: lessons without an LLM, and the quality gate.
- `capy.memory.projection` and `capy.memory.operations`: records from lessons, repeats,
  feedback and the user's operations; confidence and status from counts.
- `capy.memory.digest` and `capy.memory.inject`: what hooks read and say.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from capy.memory.service import (
        LearnReport,
        learn,
        records_of,
        refresh_digest,
        write_operation,
    )

_SERVICE = ("LearnReport", "learn", "records_of", "refresh_digest", "write_operation")


def __getattr__(name: str):
    """The service's names, imported on first use: hooks import `capy.memory.digest` on every
    call and must not pay for the learning code (dataclasses alone cost tens of ms)."""
    if name in _SERVICE:
        from capy.memory import service

        return getattr(service, name)
    raise AttributeError(f"module 'capy.memory' has no attribute {name!r}")


__all__ = ["LearnReport", "learn", "records_of", "refresh_digest", "write_operation"]
