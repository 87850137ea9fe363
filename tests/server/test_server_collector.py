"""The server leaves what it built to answer out of the collector's full passes: after a tool's
first call everything tracked is frozen, once per tool (capy.server.collector)."""

from __future__ import annotations

import gc

import pytest

from capy.server.collector import freeze_after_first_call


@pytest.fixture
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()  # the rest of the test session collects as before


def test_a_tools_first_call_freezes_what_was_built(unfrozen):
    built = [[index] for index in range(1000)]  # tracked containers, as a call's imports leave
    assert gc.get_freeze_count() == 0
    assert freeze_after_first_call("capy_test_first_call")
    assert gc.get_freeze_count() >= len(built)


def test_later_calls_of_the_same_tool_freeze_nothing(unfrozen):
    assert freeze_after_first_call("capy_test_repeated")
    frozen = gc.get_freeze_count()
    gc.unfreeze()
    assert not freeze_after_first_call("capy_test_repeated")
    assert gc.get_freeze_count() == 0 < frozen


def test_a_full_collection_after_the_freeze_walks_only_what_came_since(unfrozen):
    kept = [{"n": index} for index in range(20_000)]  # long-lived state of the server
    freeze_after_first_call("capy_test_full_pass")
    walked = []

    def count(phase: str, info: dict) -> None:
        if phase == "stop":
            walked.append(len(gc.get_objects()))

    gc.callbacks.append(count)
    try:
        gc.collect()
    finally:
        gc.callbacks.remove(count)
    assert walked and walked[0] < len(kept) // 4
