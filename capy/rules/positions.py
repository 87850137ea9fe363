"""Where a value sits in a pack file: what a parsed pack and a cached one both carry.

Kept apart from the YAML loader so that a rule set read back from the compiled-rules cache
(every hook and most commands) never imports ruamel.yaml.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

PathKey = tuple[str | int, ...]


@dataclass(frozen=True)
class Position:
    line: int  # 1-based
    column: int  # 1-based


@dataclass(frozen=True)
class Loaded:
    data: Any
    positions: dict[PathKey, Position]
    key_positions: dict[PathKey, Position]

    def position_of(self, path: PathKey, *, key: bool = False) -> Position:
        """Closest known position for a path: the value (or its key), else its nearest parent."""
        table = self.key_positions if key else self.positions
        probe = tuple(path)
        while probe:
            if probe in table:
                return table[probe]
            if probe in self.positions:
                return self.positions[probe]
            probe = probe[:-1]
        return self.positions.get((), Position(1, 1))
