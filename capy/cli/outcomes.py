"""Why sessions were skipped or failed, for a person: `capy sweep` and `capy vault import`.

A count alone ("skipped: 8 live") leaves a person guessing what to do. Each outcome other than
success gets its reason: once when every session of that outcome shares it ("8 live: modified
in the last 60 seconds"), else per session, the first few of them; --json lists every session.
Failures are listed in full: each one may need something done.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from capy.cli.output import say

# Per-session reasons shown for one outcome before the rest are counted: a first sweep can
# skip hundreds of small sessions, and a screen of them hides the summary.
SHOWN_PER_OUTCOME = 5


def print_reasons(sessions: Iterable[Any], outcomes: Sequence[str], *, failed: str) -> None:
    """Under the summary, why each outcome in `outcomes` happened; every `failed` one."""
    by_outcome: dict[str, list[Any]] = {}
    for item in sessions:
        by_outcome.setdefault(item.outcome, []).append(item)
    for outcome in [*outcomes, failed]:
        items = by_outcome.get(outcome, [])
        reasons = {item.reason for item in items}
        if not items:
            continue
        if len(reasons) == 1 and outcome != failed:
            say(f"  {len(items)} {outcome}: {reasons.pop() or 'no reason recorded'}")
            continue
        shown = items if outcome == failed else items[:SHOWN_PER_OUTCOME]
        for item in shown:
            say(f"  {outcome}: {item.path}: {item.reason}")
        if len(items) > len(shown):
            say(f"  ... {len(items) - len(shown)} more {outcome}; --json lists every session")
