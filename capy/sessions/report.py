"""What a pass over session transcripts reports, the same way for the sweep and the vault import:
one outcome per session, counts per outcome, totals, and the JSON both CLIs print."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar


@dataclass
class SessionsReport:
    """Subclasses name their outcomes (in report order) and what their totals add up."""

    OUTCOMES: ClassVar[tuple[str, ...]] = ()

    dry_run: bool
    sessions: list[Any] = field(default_factory=list)  # one dataclass per session, `outcome` set

    @property
    def counts(self) -> dict[str, int]:
        found = Counter(item.outcome for item in self.sessions)
        return {outcome: found[outcome] for outcome in self.OUTCOMES}

    @property
    def totals(self) -> dict[str, int]:
        raise NotImplementedError

    def as_dict(self) -> dict:
        return {
            "dry_run": self.dry_run,
            "counts": self.counts,
            "totals": self.totals,
            "sessions": [asdict(item) for item in self.sessions],
        }
