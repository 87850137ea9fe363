"""Project overlays may only tighten the security-relevant packs; one that loosens is left out.

Which packs are security-relevant, and which way is tighter for each part of them, is data: the
security pack's `project_limits` rules. An overlay from an untrusted project is applied to a copy
first and the result compared with the pack as it stood; if any part moved the loose way (or a
way the limits cannot judge, which is `fixed`), the whole overlay is ignored and reported.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from capy.rules.diagnostics import Diagnostic
from capy.trust.direction import MISSING, Direction, loosenings, parse_direction

# The origins of overlays read from a project the user has not trusted, and from one the user
# trusts as its files are now (see ruleset.overlay_dirs).
UNTRUSTED_PROJECT = "project"
TRUSTED_PROJECT = "project-trusted"
LIMITS_PACK = "security"
LIMITS_SECTION = "project_limits"


@dataclass(frozen=True)
class PackLimits:
    default: Direction
    paths: dict[tuple[str, ...], Direction]

    def governs_below(self, path: tuple) -> bool:
        size = len(path)
        return any(len(key) > size and key[:size] == path for key in self.paths)


def read_limits(security_data: dict[str, Any] | None) -> dict[str, PackLimits]:
    """The active limits by pack name, from the security pack as user overlays left it."""
    limits: dict[str, PackLimits] = {}
    entries = (security_data or {}).get(LIMITS_SECTION)
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or entry.get("status") == "disabled":
            continue
        paths = {}
        for item in entry.get("paths") or []:
            if isinstance(item, dict) and isinstance(item.get("path"), str):
                paths[tuple(item["path"].split("."))] = parse_direction(item)
        limits[str(entry.get("pack"))] = PackLimits(parse_direction(entry.get("default")), paths)
    return limits


def loosened(limits: PackLimits, before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What the change from `before` to `after` loosens, in the words of a warning."""
    return _walk(limits, before, after, (), limits.default)


def _walk(limits: PackLimits, before: Any, after: Any, path: tuple, inherited: Direction):
    if before == after:
        return []
    direction = limits.paths.get(path, inherited)
    # The pack's top level is always taken key by key, so a reason names the section it is in.
    descend = not path or limits.governs_below(path)
    if isinstance(before, dict) and isinstance(after, dict) and descend:
        found = []
        for key in [*before, *(key for key in after if key not in before)]:
            found += _walk(
                limits, before.get(key, MISSING), after.get(key, MISSING), (*path, key), direction
            )
        return found
    return loosenings(direction, before, after, ".".join(str(part) for part in path))


def limit_diagnostics(packs: dict[str, Any]) -> Iterable[Diagnostic]:
    """Each limit names a pack in force and paths inside it: a typo would leave that part on
    the pack's default direction, which for a `free` default fails open."""
    security = packs.get(LIMITS_PACK)
    entries = security.data.get(LIMITS_SECTION) if security is not None else None
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, dict):
            continue
        here = (LIMITS_SECTION, index)
        target = packs.get(entry.get("pack"))
        if target is None:
            yield security.at(
                (*here, "pack"),
                "unknown-pack",
                f"project limits name unknown pack {entry.get('pack')!r}",
                "known packs: " + ", ".join(sorted(packs)),
                rule_id=entry.get("id"),
            )
            continue
        for number, item in enumerate(entry.get("paths") or []):
            path = item.get("path") if isinstance(item, dict) else None
            if isinstance(path, str) and not _exists(target.data, path.split(".")):
                yield security.at(
                    (*here, "paths", number, "path"),
                    "unknown-path",
                    f"project limits name {path!r}, which pack {target.name!r} does not have",
                    f"`capy rules show {target.name}` lists its sections",
                    rule_id=entry.get("id"),
                )


def _exists(data: Any, parts: list[str]) -> bool:
    for part in parts:
        if not isinstance(data, dict) or part not in data:
            return False
        data = data[part]
    return True
