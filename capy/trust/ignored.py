"""What a project tried to loosen and capy ignored, and the one warning line said about it."""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass

MAX_REASONS_SHOWN = 3
_warned: set[str] = set()


@dataclass(frozen=True)
class IgnoredItem:
    """A project overlay (`kind` "overlay") or config key (`kind` "config") left out."""

    kind: str
    file: str
    name: str  # the overlay's pack name, or the dotted config key
    reasons: tuple[str, ...]
    target: str = ""  # the pack an overlay would have changed

    def summary(self) -> str:
        """Why, in one clause: `it disables X; raises Y, and a project may only tighten ...`."""
        shown = "; ".join(self.reasons[:MAX_REASONS_SHOWN])
        if len(self.reasons) > MAX_REASONS_SHOWN:
            shown += f"; and {len(self.reasons) - MAX_REASONS_SHOWN} more"
        return f"it {shown}, and a project may only tighten security"

    def line(self) -> str:
        what = (
            f"project overlay {self.file} ({self.name})"
            if self.kind == "overlay"
            else (f"{self.name} from {self.file}")
        )
        return (
            f"capy ignored {what}: {self.summary()}; "
            "run `capy trust` in the project if you trust its files"
        )

    def as_json(self) -> dict:
        data = asdict(self)
        data["reasons"] = list(self.reasons)
        return data


def warn_ignored(items: list[IgnoredItem] | tuple[IgnoredItem, ...]) -> None:
    """One warning per ignored item per process: stderr for the CLI and hooks (Python's last-resort
    handler), the server log for `capy serve`; a long-running server says it once."""
    logger = logging.getLogger("capy.trust")
    for item in items:
        line = item.line()
        if line not in _warned:
            _warned.add(line)
            logger.warning("%s", line)
