"""The capture rules a hook reads from its compact cache (built on the slow path only).

The detectors in force are tens of kilobytes that only capturing hooks need, so they sit in a
file of their own beside the cache entry, named by their hash; the entry holds its name and
watches it (a missing or changed file rebuilds the entry). PreToolUse never reads it. The file
is marshal data, which a hook reads in less than half the time of the same JSON; it is read
only when this user owns it and nobody else may write it (capy.watched.read_own_file).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from capy.rules.ruleset import RuleSet


def compact_capture(ruleset: RuleSet, *, enabled: bool, secrets_file: str) -> dict[str, Any] | None:
    """The capsules pack's `capture` section, its kinds, and the file holding the detectors in
    force (`write_detectors`: the hook redacts with them); None when capture is off or the pack
    has no section."""
    from capy.hooks.compiled import in_force

    data = ruleset.pack("capsules").data
    if not enabled or not data.get("capture"):
        return None
    return {
        **in_force(data["capture"]),
        "kinds": sorted(data["kinds"]),
        "secrets_file": secrets_file,
    }


def write_detectors(ruleset: RuleSet) -> str:
    """The file of the detectors in force, written beside the cache; hooks redact with them
    what they keep (capsules, and the session's events whether capture is on or not)."""
    import json
    import marshal
    import os
    import zlib

    from capy.hooks.compiled import CACHE_FORMAT, cache_dir
    from capy.masking import plain_detectors
    from capy.watched import write_cache_file

    detectors = plain_detectors(ruleset.view("secrets"))
    body = json.dumps(detectors, sort_keys=True)
    path = os.path.join(cache_dir(), f"detectors-{zlib.crc32(body.encode()):08x}.marshal")
    write_cache_file(path, marshal.dumps({"format": CACHE_FORMAT, "secrets": detectors}))
    return path


def read_detectors(path: str) -> dict[str, Any]:
    """The detectors `compact_capture` wrote; an OSError when the file is gone or unreadable
    (the hook then captures nothing rather than spool what it could not redact)."""
    from capy.hooks.compiled import CACHE_FORMAT
    from capy.watched import read_own_marshal_dict

    entry = read_own_marshal_dict(path)
    if entry is None or entry.get("format") != CACHE_FORMAT:
        raise OSError(f"the capture redaction rules are missing: {path}")
    return entry["secrets"]
