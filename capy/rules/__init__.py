"""The rule-pack engine: load, validate, lint, merge, hash and expose typed views of the packs.

Exports load lazily: a view module (`capy.rules.views.search`) imports this package first, and a
warm CLI start that reads a cached rule set needs none of the loader, the merger or the lint.
"""

from __future__ import annotations

from capy.lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from capy.rules.diagnostics import Diagnostic
    from capy.rules.ruleset import RulesError, RuleSet, build_ruleset, load_rules

_HOMES = {
    "Diagnostic": "capy.rules.diagnostics",
    "RuleSet": "capy.rules.ruleset",
    "RulesError": "capy.rules.ruleset",
    "build_ruleset": "capy.rules.ruleset",
    "load_rules": "capy.rules.ruleset",
}

__all__ = ["Diagnostic", "RuleSet", "RulesError", "build_ruleset", "load_rules"]

__getattr__ = lazy_exports(__name__, _HOMES)
