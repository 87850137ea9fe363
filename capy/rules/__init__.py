"""The rule-pack engine: load, validate, lint, merge, hash and expose typed views of the packs."""

from capy.rules.diagnostics import Diagnostic
from capy.rules.ruleset import RulesError, RuleSet, build_ruleset, load_rules

__all__ = ["Diagnostic", "RuleSet", "RulesError", "build_ruleset", "load_rules"]
