"""Every shipped pack has a typed, frozen view that builds from the merged data."""

from __future__ import annotations

import pydantic
import pytest

from capy.rules import load_rules
from capy.rules.views.base import PackView

PACKS = sorted(load_rules().packs)


@pytest.mark.parametrize("name", PACKS)
def test_view_builds_and_is_frozen(name):
    view = load_rules().view(name)
    assert isinstance(view, PackView)
    assert view.pack == name
    with pytest.raises(pydantic.ValidationError):
        view.pack = "changed"


def test_views_are_built_once_per_rule_set():
    rules = load_rules()
    assert rules.view("search") is rules.view("search")
