"""Suggestions in replies are worded for their reader: tool calls for an agent, commands for a
person. Each hint is written once with both spellings; these pin both."""

from __future__ import annotations

import shlex

import pytest

from capy.api.hints import AGENT_HINTS, PERSON_HINTS


def test_search_call_for_an_agent_is_the_tool_call():
    call = AGENT_HINTS.search(["db timeout"], source="execute:shell:ab", kinds=["ephemeral"])
    assert call == (
        'capy_search(queries=["db timeout"], source="execute:shell:ab", '
        'include_kinds=["ephemeral"])'
    )
    assert AGENT_HINTS.search() == 'capy_search(queries=["..."])'


def test_search_command_for_a_person_is_a_shell_command_that_parses_back():
    command = PERSON_HINTS.search(["db timeout"], source="kb *", kinds=["ephemeral"])
    assert command == "capy search 'db timeout' --source 'kb *' --kind ephemeral"
    assert shlex.split(command) == [
        "capy", "search", "db timeout", "--source", "kb *", "--kind", "ephemeral",
    ]  # fmt: skip
    assert PERSON_HINTS.search() == "capy search ..."


@pytest.mark.parametrize(
    ("hint", "agent", "person"),
    [
        ("refetch", "force=true", "--force"),
        ("split_again", "split=true", "--split"),
        ("apply_cleanup", "dry_run=false", "--apply"),
        ("rerun_without_intent", "without an intent", "without --intent"),
        ("index_file", "capy_index", "capy index FILE"),
    ],
)
def test_every_hint_names_the_right_spelling_for_each_reader(hint, agent, person):
    for_agent, for_person = getattr(AGENT_HINTS, hint)(), getattr(PERSON_HINTS, hint)()
    assert agent in for_agent and person not in for_agent
    assert person in for_person and agent not in for_person


def test_left_out_kinds():
    assert AGENT_HINTS.include_kinds(["ephemeral"]) == 'add include_kinds=["ephemeral"]'
    assert PERSON_HINTS.include_kinds(["ephemeral", "session"]) == (
        "pass --kind ephemeral --kind session"
    )
