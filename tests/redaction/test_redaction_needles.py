"""The needle pass of `SecretScanner`: one scan locates every keyword and factor literal, overlaps
included, and the shipped detectors get the plans that let the scanner search around them."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capy.rules.secretplan import plan_for
from capy.rules.secretscan import SecretScanner, compile_detector


def every_start(needle: str, text: str) -> list[int]:
    return [index for index in range(len(text)) if text.startswith(needle, index)]


# Needles that start with letters and with other characters, prefixes of one another, and
# needles that overlap themselves or each other.
NEEDLES = ["pass", "password", "_password", "://", "sk", "sk-proj-", "aaa", "aba", "-us", "ss"]


@pytest.fixture(scope="module")
def needle_scanner():
    detectors = [
        compile_detector({"id": f"t.{index}", "pattern": re.escape(needle), "keywords": [needle]})
        for index, needle in enumerate(NEEDLES)
    ]
    return SecretScanner(detectors)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([*NEEDLES, "a", "b", "s", "-", ":", "/", " ", "\n"]), max_size=40))
def test_needle_starts_match_a_look_at_every_position(needle_scanner, pieces):
    text = "".join(pieces)
    starts = needle_scanner._needle_starts(text)
    assert {needle: starts.get(needle, []) for needle in NEEDLES} == {
        needle: every_start(needle, text) for needle in NEEDLES
    }


@pytest.fixture(scope="module")
def shipped_plans(secrets):
    scanner = secrets.scanner
    return {d.rule_id: plan for d, plan in zip(scanner.detectors, scanner.plans, strict=True)}


def test_only_multi_line_detectors_scan_the_whole_text(shipped_plans):
    whole_text = {rule_id for rule_id, plan in shipped_plans.items() if plan is None}
    assert whole_text == {
        "secrets.gcp-service-account-key",
        "secrets.kubernetes-secret-data",
        "secrets.pgp-private-key-block",
        "secrets.private-block",
        "secrets.private-key-pem",
        "secrets.private-key-tail",
        "secrets.private-key-unterminated",
        "secrets.putty-private-key",
    }


def test_the_generic_assignment_starts_at_the_name_around_its_keyword(shipped_plans):
    plan = shipped_plans["secrets.generic-secret-assignment"]
    _, factors = plan.choose(lambda literal: 0)
    assert plan.width is None  # line by line
    assert {factor.literal for factor in factors} >= {"pass", "secret", "token"}
    assert all(factor.lead and r"\U0000005f" in factor.lead for factor in factors)  # `_` in names


@pytest.mark.parametrize(
    ("pattern", "led"),
    [(r"ghp_\w{36}", True), (r"(?i)ghp_\w{36}", False), (r"(?<!\w)ghp_\w{36}", False)],
)
def test_literal_led_plans(pattern, led):
    assert plan_for(re.compile(pattern)).literal_led is led


def test_needle_starts_of_a_text_without_needles(needle_scanner):
    assert needle_scanner._needle_starts("nothing to see here\n" * 50) == {}
    assert needle_scanner.find("") == []
