"""Which way is tighter: judging a project's change to a value against the value it replaces.

The vocabulary is shared by the settings (a field's `x-capy-project` annotation) and the rule
packs (the security pack's `project_limits`):

- `free`: anything goes (search tuning, chunking, routing text).
- `fixed`: any change loosens (paths, regexes, anything whose direction cannot be decided).
- `lower` / `higher`: a number may only go down / up (caps, timeouts, limits).
- `on` / `off`: a switch may only be turned on / off.
- `subset` / `superset`: a list may only lose / gain entries (allow lists / deny lists).
- `add`: a list of rules may only gain rules (detectors, blocked networks, deny policies), and
  only rules whose fields satisfy `when`; disabling or overriding an existing rule loosens.
- `remove`: a list of rules may only lose rules (allowlists); adding or overriding one loosens.

Lists of rules are compared by id (status included), with rules the engine does not apply
(deprecated, disabled) counted as absent. A mapping under a
scalar direction is judged key by key, so `limits: lower` covers every number below it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

DIRECTIONS = (
    "free",
    "fixed",
    "lower",
    "higher",
    "on",
    "off",
    "subset",
    "superset",
    "add",
    "remove",
)
MISSING: Any = type("Missing", (), {"__repr__": lambda self: "nothing"})()


@dataclass(frozen=True)
class Direction:
    """How a value may change from a project; `when` limits which new rules `add` accepts."""

    name: str
    when: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)


FIXED = Direction("fixed")


def loosenings(direction: Direction, before: Any, after: Any, path: str) -> list[str]:
    """Why changing `before` into `after` at `path` loosens security; empty when it does not."""
    if before == after or direction.name == "free":
        return []
    if direction.name in ("add", "remove", "fixed") and _is_rule_list(before, after):
        return _rule_list_changes(direction, _rules(before), _rules(after), path)
    if isinstance(before, dict) and isinstance(after, dict) and direction.name != "fixed":
        found = []
        for key in [*before, *(key for key in after if key not in before)]:
            sub = f"{path}.{key}" if path else str(key)
            found += loosenings(direction, before.get(key, MISSING), after.get(key, MISSING), sub)
        return found
    reason = _scalar_change(direction.name, before, after)
    if reason is None:
        return []
    shown = "" if reason.startswith("turns") else _values(before, after)
    return [f"{reason} {path}{shown}"]


def _scalar_change(name: str, before: Any, after: Any) -> str | None:
    if name in ("lower", "higher") and _number(before) and _number(after):
        tighter = after <= before if name == "lower" else after >= before
        return None if tighter else ("raises" if name == "lower" else "lowers")
    if name in ("on", "off") and isinstance(after, bool):
        return None if after is (name == "on") else f"turns {'off' if name == 'on' else 'on'}"
    if name in ("subset", "superset", "add", "remove") and _listlike(before, after):
        old, new = _keys(before), _keys(after)
        if name in ("subset", "remove"):
            return None if new <= old else "adds entries to"
        return None if new >= old else "removes entries from"
    return "changes"


def _rule_list_changes(direction: Direction, before: dict, after: dict, path: str) -> list[str]:
    found = []
    for rule_id, rule in before.items():
        if rule_id not in after:
            if direction.name != "remove":
                found.append(f"disables {rule_id}")
        elif after[rule_id] != rule:
            found.append(f"overrides {rule_id}")
    for rule_id, rule in after.items():
        if rule_id in before:
            continue
        if direction.name != "add":
            found.append(f"adds {rule_id} to {path}")
            continue
        for key, allowed in direction.when.items():
            value = rule.get(key)
            if value not in allowed:
                found.append(f"adds {rule_id} with {key} {value!r}")
    return found


def _is_rule_list(before: Any, after: Any) -> bool:
    def rules_or_empty(value: Any) -> bool:
        return value is MISSING or (
            isinstance(value, list) and all(isinstance(v, dict) and "id" in v for v in value)
        )

    return rules_or_empty(before) and rules_or_empty(after)


def _rules(value: Any) -> dict[str, dict]:
    """The rules the engine applies, by id; a deprecated or disabled one is as good as absent."""
    # Imported here: capy.config uses this module too, and capy.rules imports capy.config.
    from capy.rules.views.base import LIVE_STATUSES

    if value is MISSING:
        return {}
    return {str(rule["id"]): rule for rule in value if rule.get("status") in LIVE_STATUSES}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _listlike(before: Any, after: Any) -> bool:
    kinds = (list, tuple)
    return isinstance(after, kinds) and (before is MISSING or isinstance(before, kinds))


def _keys(value: Any) -> set[str]:
    if value is MISSING:
        return set()
    return {json.dumps(item, sort_keys=True, default=str) for item in value}


def _values(before: Any, after: Any) -> str:
    def shown(value: Any) -> str:
        text = "nothing" if value is MISSING else json.dumps(value, default=str)
        return text if len(text) <= 60 else text[:57] + "..."

    if isinstance(before, list | tuple | dict) or isinstance(after, list | tuple | dict):
        return ""
    return f" from {shown(before)} to {shown(after)}"


def parse_direction(spec: Any) -> Direction:
    """A direction from data: a name, or a mapping `{direction: NAME, when: {FIELD: [VALUES]}}`.

    Anything unreadable is `fixed`: a guard that cannot tell which way is tighter fails closed.
    """
    if isinstance(spec, str):
        return Direction(spec) if spec in DIRECTIONS else FIXED
    if isinstance(spec, Mapping) and spec.get("direction") in DIRECTIONS:
        when = spec.get("when") or {}
        if not isinstance(when, Mapping):
            return FIXED
        return Direction(
            spec["direction"], {str(key): tuple(values or ()) for key, values in when.items()}
        )
    return FIXED
