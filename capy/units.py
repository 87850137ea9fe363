"""Sizes as people read them, the same in the CLI and in tool replies."""

from __future__ import annotations


def human_bytes(count: float) -> str:
    for unit in ("B", "KiB", "MiB"):
        if count < 1024:
            return f"{int(count)} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count:.1f} GiB"
