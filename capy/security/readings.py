"""Every reading of a command that deny and ask rules judge (and memory's blocking with them):
each part as written, with quotes removed, without leading `NAME=value` assignments, and as
every command it runs through a wrapper (`timeout 5 git push --force` runs `git push --force`).
Kept apart from the policy module so a hook can read commands without loading the policies."""

from __future__ import annotations

from capy.security.shellsplit import dequoted, without_assignments
from capy.security.shellwords import normalise_command
from capy.security.wrappers import wrapped_commands

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def command_readings(
    texts: list[str], wrappers: Any, *, dequote: bool = True
) -> tuple[list[str], bool]:
    """Each text, and each command it runs through a wrapper: as written, with quotes removed,
    and without leading assignments; no repeats. True when some wrapper could not be read."""
    queue = list(dict.fromkeys(texts))
    undecidable = False
    if wrappers is not None:
        for text in list(queue):
            found = wrapped_commands(text, wrappers)
            queue.extend(found.commands)
            undecidable = undecidable or found.overflow
    seen: dict[str, None] = {}
    for text in dict.fromkeys(queue):
        # Quote removal and assignment stripping only change texts that have quotes or an `=`
        # in the first word; skipping the rest keeps a megabyte of commands fast.
        quoted = dequote and any(q in text for q in "'\"\\")
        variants = [text, dequoted(text) if quoted else None]
        for reading in variants:
            if not reading:
                continue
            seen.setdefault(normalise_command(reading), None)
            if "=" in next(iter(reading.split(None, 1)), ""):
                stripped = without_assignments(reading)
                if stripped:
                    seen.setdefault(normalise_command(stripped), None)
    return list(seen), undecidable
