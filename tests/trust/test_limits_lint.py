"""`capy rules validate` checks the project limits themselves: a typo in a pack name or a path
would leave that part on its pack's default, which for a `free` default fails open."""

from __future__ import annotations

from capy.rules.ruleset import build_ruleset

TYPO = """\
pack: typo
schema: overlay.v1
version: 1.0.0
description: A user overlay with typos in its project limits.
requires: ">=0.1"
extends: security
patch:
  project_limits:
    - id: security.project-may-tighten-retention
      paths:
        - {path: size.max_source_byte, direction: lower}
    - id: typo.limits-nothing
      status: active
      since: "1.0.0"
      description: Limits on a pack that does not exist.
      pack: nosuch
      default: fixed
      paths: []
"""


def test_unknown_packs_and_paths_in_the_limits_are_errors(tmp_path):
    overlay = tmp_path / "typo.yaml"
    overlay.write_text(TYPO)
    ruleset = build_ruleset([(overlay, "user")])
    found = {(d.code, d.rule_id, d.line) for d in ruleset.diagnostics if d.is_error}
    assert found == {
        ("unknown-path", "security.project-may-tighten-retention", 11),
        ("unknown-pack", "typo.limits-nothing", 16),
    }


def test_the_shipped_limits_name_real_packs_and_paths():
    assert build_ruleset().ok
