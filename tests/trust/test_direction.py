"""The direction vocabulary fails closed: what it cannot judge counts as loosening."""

from __future__ import annotations

import pytest

from capy.trust.direction import MISSING, Direction, loosenings, parse_direction


@pytest.mark.parametrize(
    "spec", ["sideways", None, 3, {"direction": "tighter"}, {"direction": "add", "when": [1]}]
)
def test_an_unreadable_direction_is_fixed(spec):
    assert parse_direction(spec) == Direction("fixed")


@pytest.mark.parametrize(
    ("direction", "before", "after", "loosens"),
    [
        ("lower", 10, 5, False),
        ("lower", 10, 11, True),
        ("lower", 10, "10", True),  # not a number: cannot be judged
        ("lower", MISSING, 1, True),  # a new key under a guarded path
        ("higher", 0.5, 0.9, False),
        ("on", True, False, True),
        ("on", False, True, False),
        ("off", True, False, False),
        ("subset", ["a", "b"], ["a"], False),
        ("subset", ["a"], ["a", "c"], True),
        ("superset", ["a"], ["a", "c"], False),
        ("superset", ["a", "b"], ["a"], True),
        ("fixed", {"a": 1}, {"a": 2}, True),
        ("free", {"a": 1}, {"a": 2}, False),
        ("lower", {"a": 1, "b": 2}, {"a": 0, "b": 2}, False),  # mappings are judged per key
        ("lower", {"a": 1, "b": 2}, {"a": 0, "b": 3}, True),
    ],
)
def test_scalar_and_list_directions(direction, before, after, loosens):
    assert bool(loosenings(Direction(direction), before, after, "x")) is loosens


RULE = {"id": "p.one", "status": "active", "since": "1.0.0", "decision": "deny"}


@pytest.mark.parametrize(
    ("direction", "after", "reason"),
    [
        ("add", [RULE, {**RULE, "id": "p.two"}], None),
        ("add", [RULE, {**RULE, "id": "p.two", "decision": "allow"}], "adds p.two with decision"),
        ("add", [{**RULE, "status": "disabled"}], "disables p.one"),
        ("add", [{**RULE, "status": "deprecated"}], "disables p.one"),
        ("add", [{**RULE, "decision": "ask"}], "overrides p.one"),
        ("remove", [{**RULE, "status": "disabled"}], None),
        ("remove", [RULE, {**RULE, "id": "p.two"}], "adds p.two to x"),
        ("fixed", [RULE, {**RULE, "id": "p.two"}], "adds p.two to x"),
    ],
)
def test_rule_lists_are_compared_by_id(direction, after, reason):
    spec = Direction(direction, {"decision": ("deny", "ask")} if direction == "add" else {})
    found = loosenings(spec, [RULE], after, "x")
    assert (found == []) if reason is None else (reason in found[0])
