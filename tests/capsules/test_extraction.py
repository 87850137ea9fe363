"""Every entity and relation rule's match examples yield what the rule says they name."""

from __future__ import annotations

import pytest

from capy.capsules.extraction import extract
from capy.capsules.model import Capsule, Scope
from capy.rules import build_ruleset

PACK = build_ruleset().view("capsules")
PACK_DATA = build_ruleset().packs["capsules"].data


def _capsule(text: str, kind: str = "note", metadata=None) -> Capsule:
    return Capsule("0" * 64, 1, Scope("p"), "cli", kind, text, metadata or {}, "", "", "")


def _examples(section):
    return section["rules"] if isinstance(section, dict) else section


ENTITY_RULES = [rule for rule in PACK.entities if rule.active]
RELATION_RULES = [rule for rule in PACK.relations.rules if rule.active]
RAW = {rule["id"]: rule for rule in [*PACK_DATA["entities"], *PACK_DATA["relations"]["rules"]]}


@pytest.mark.parametrize("rule", ENTITY_RULES, ids=[rule.id for rule in ENTITY_RULES])
def test_entity_rule_examples_name_an_entity_of_its_type(rule):
    examples = RAW[rule.id]["examples"]
    for text in examples["match"]:
        kind = rule.kinds[0] if rule.kinds else "note"
        metadata = {rule.metadata: text} if rule.metadata else {}
        found = extract(_capsule("" if rule.metadata else text, kind, metadata), PACK)
        assert any(entity.type == rule.type for entity in found.mentions), (rule.id, text)


@pytest.mark.parametrize("rule", RELATION_RULES, ids=[rule.id for rule in RELATION_RULES])
def test_relation_rule_examples_yield_their_relation(rule):
    for text in RAW[rule.id]["examples"]["match"]:
        found = extract(_capsule(text), PACK)
        assert any(r.relation == rule.relation for r in found.relations), (rule.id, text)


def test_a_reversed_phrase_puts_the_cause_first():
    found = extract(_capsule("KeyError was caused by config.yaml"), PACK)
    [relation] = found.relations
    assert (relation.subject.name, relation.relation, relation.object.name) == (
        "config.yaml",
        "causes",
        "KeyError",
    )


def test_names_are_normalised_so_one_entity_is_counted_once():
    found = extract(_capsule("see ./README.md and README.md; pip install HTTPX"), PACK)
    names = {(e.type, e.name): n for e, n in found.mentions.items()}
    assert names[("file", "README.md")] == 2 and ("library", "httpx") in names


def test_a_forgotten_capsule_names_nothing():
    capsule = _capsule("")
    forgotten = Capsule(**{**capsule.__dict__, "forgotten_reason": "leaked"})
    assert not extract(forgotten, PACK).mentions
