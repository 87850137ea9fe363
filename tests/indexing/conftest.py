"""Real encrypted stores under the test's private HOME, the rules in force, and rule overlays."""

from __future__ import annotations

import textwrap

import pytest

from capy.rules import load_rules
from capy.store import open_store


@pytest.fixture
def store(project_dir):
    with open_store(project_dir) as opened:
        yield opened


@pytest.fixture(scope="session")
def rules():
    """The shipped packs, built once: a fresh build costs seconds, and every test's private
    HOME would otherwise rebuild it. Tests pass it explicitly to the functions they call."""
    from dataclasses import fields

    from capy.rules.ruleset import RuleSet, build_ruleset

    class ShippedRules(RuleSet):
        def __repr__(self) -> str:  # the full repr is megabytes; failure reports print it
            return "<shipped rules>"

    ruleset = build_ruleset([])
    assert ruleset.ok
    return ShippedRules(**{item.name: getattr(ruleset, item.name) for item in fields(ruleset)})


@pytest.fixture
def overlay(project_rules_dir, project_dir):
    """Write a project overlay patching one pack; return the rules in force with it."""

    def write(extends: str, patch: str, name: str = "test-overlay"):
        body = textwrap.dedent(
            f"""\
            pack: {name}
            schema: overlay.v1
            version: 1.0.0
            description: A test overlay.
            requires: ">=0.1"
            extends: {extends}
            patch:
            """
        ) + textwrap.indent(textwrap.dedent(patch), "  ")
        (project_rules_dir / f"{name}.yaml").write_text(body, encoding="utf-8")
        return load_rules(project_dir)

    return write


@pytest.fixture
def cached_rules(rules, isolated_environment):
    """Seed this test's rules cache with the shipped packs, as a first `capy` run would leave
    it: CLI commands and subprocesses then skip the multi-second validation."""
    from capy.rules.cache import cache_key, write_cache
    from capy.rules.ruleset import _packs_to_cache

    write_cache(cache_key([]), _packs_to_cache(rules))
    return rules
