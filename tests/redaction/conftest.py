"""The shipped secrets pack, built once for the redaction tests (no overlays can reach it)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def secrets():
    from capy.rules.ruleset import build_ruleset

    return build_ruleset(include_shipped=True).view("secrets")
