"""Lazy package exports: imported on first use, then plain attributes of the package."""

from __future__ import annotations

import importlib

import pytest


def test_a_lazy_name_is_kept_on_its_package_after_first_use():
    """capy imports these names inside functions, many times a tool call: after the first, the
    lookup must not go through the import system again."""
    executor = importlib.import_module("capy.executor")
    first = executor.ExecutorError
    from capy.executor.errors import ExecutorError

    assert first is ExecutorError
    assert vars(executor)["ExecutorError"] is ExecutorError


def test_an_unknown_name_is_still_an_attribute_error():
    executor = importlib.import_module("capy.executor")
    with pytest.raises(AttributeError, match="no_such_name"):
        executor.no_such_name  # noqa: B018
