"""Soft failures come from the executor pack's per-language `soft_failure` rule, not from code."""

from __future__ import annotations

from pathlib import Path

import pytest

from capy.executor import execute
from capy.rules import build_ruleset

_OVERLAY = """\
pack: soft-python
schema: overlay.v1
version: 1.0.0
description: Python's exit 3 reads as a result, even when it printed nothing.
requires: ">=0.1"
extends: executor
patch:
  languages:
    - id: executor.python
      soft_failure: {exit_codes: [3], needs_stdout: false}
"""


@pytest.fixture(scope="module")
def overlaid_view(tmp_path_factory: pytest.TempPathFactory):
    overlay = Path(tmp_path_factory.mktemp("rules")) / "soft-python.yaml"
    overlay.write_text(_OVERLAY)
    ruleset = build_ruleset([(overlay, "user")])
    assert ruleset.ok, [str(item) for item in ruleset.diagnostics]
    return ruleset.view("executor")


def test_the_shipped_shell_rule_is_exit_1_with_stdout(view) -> None:
    shell = view.language("shell")
    assert shell.soft_failure is not None
    assert shell.soft_failure.exit_codes == (1,) and shell.soft_failure.needs_stdout
    assert view.language("python").soft_failure is None


def test_an_overlay_gives_another_language_soft_failures(overlaid_view) -> None:
    silent_three = execute("python", "raise SystemExit(3)", rules=overlaid_view)
    assert silent_three.exit_code == 3 and silent_three.soft_failure
    one = execute("python", "print('x'); raise SystemExit(1)", rules=overlaid_view)
    assert one.exit_code == 1 and not one.soft_failure
