"""Every detecting rule's own examples, one test case per rule: match must match, no_match not."""

from __future__ import annotations

import pytest

from capy.rules import build_ruleset
from capy.rules.lint import detecting_rules
from capy.rules.matchers import compile_rule

RULESET = build_ruleset()
RULES = [
    (pack.name, rule_id, rule)
    for pack in RULESET.packs.values()
    for rule_id, _, rule in detecting_rules(pack)
]


def test_there_are_detecting_rules_to_check():
    assert len(RULES) >= 100


@pytest.mark.parametrize(("pack", "rule_id", "rule"), RULES, ids=[r[1] for r in RULES])
def test_rule_examples(pack, rule_id, rule):
    compiled = compile_rule(rule, RULESET.packs[pack].data)
    examples = rule["examples"]
    assert examples["match"] and examples["no_match"], f"{rule_id} needs both kinds of example"
    missed = [text for text in examples["match"] if not compiled.matches(text)]
    wrongly = [text for text in examples["no_match"] if compiled.matches(text)]
    assert missed == [], f"{rule_id} should match these"
    assert wrongly == [], f"{rule_id} should not match these"


def test_rules_test_command_reports_all_passed(capsys):
    from capy.cli import main

    assert main(["rules", "test"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: ") and "examples passed" in out
