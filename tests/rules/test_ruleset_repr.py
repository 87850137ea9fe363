"""A rule set prints as a line: pytest shows fixture values in every failing test's report,
and the full packs took minutes to render there."""

from __future__ import annotations

from capy.rules import build_ruleset


def test_a_rule_set_prints_its_pack_names_and_state():
    text = repr(build_ruleset())
    assert text.startswith("RuleSet(") and text.endswith("; ok)")
    assert "search" in text and "secrets" in text
    assert len(text) < 200
