"""Test-runner, compiler, linter and CLI failure formats, checked on real captured outputs.

Every output under `fixtures/runners/outputs/` (origins in its SOURCES.md) goes through the path
an agent's reply takes: the errors-and-failures list that heads an intent reply and the
long-output reply. `cases.yaml` names, for each, the failing test, file or line the list must
show, exactly as the tool printed it. The markers are the chunking pack's error rules; nothing
here knows a tool.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from capy.api.intent import intent_reply
from capy.api.output_excerpts import answer_sections
from capy.api.workspace import Workspace
from capy.chunking.log import chunk_log
from capy.rules.ruleset import load_rules

RUNNERS = Path(__file__).parents[2] / "fixtures" / "runners"
CASES = YAML(typ="safe").load((RUNNERS / "cases.yaml").read_text(encoding="utf-8"))["cases"]
HEADING = "### Errors and failures in the output"


@cache
def shipped_rules():
    """The shipped packs, loaded once: the tests' private HOME holds no overlays."""
    return load_rules()


def failure_list(text: str) -> str:
    """The errors-and-failures section the reply shows for `text` ('' when there is none)."""
    lines = answer_sections(text, [], shipped_rules())
    if HEADING not in lines:
        return ""
    return lines[lines.index(HEADING) + 1]


def flagged_chunks(text: str) -> str:
    """The log chunks of `text` that one flagged line each heads and titles, joined."""
    lines = {line.strip() for line in text.split("\n")}
    pieces = chunk_log(text, "output", shipped_rules().view("chunking"))
    return "\n".join(piece.content for piece in pieces if piece.title in lines)


@pytest.mark.parametrize("case", CASES, ids=[case["file"] for case in CASES])
def test_the_failure_list_names_what_failed(case: dict) -> None:
    """What failed is in the reply's failure list; a lint finding, which the list leaves out
    (a lint report is all findings), heads a chunk of its own instead."""
    text = (RUNNERS / "outputs" / case["file"]).read_text(encoding="utf-8")
    shown = failure_list(text) if case.get("listed", True) else flagged_chunks(text)
    missing = [needle for needle in case["needles"] if needle not in shown]
    assert not missing, f"{case['tool']}: {missing} not in:\n{shown}"


def test_every_output_has_a_case_and_a_source() -> None:
    outputs = sorted(path.name for path in (RUNNERS / "outputs").iterdir())
    assert outputs == sorted(case["file"] for case in CASES)
    sources = (RUNNERS / "SOURCES.md").read_text(encoding="utf-8")
    assert [name for name in outputs if f"`{name}`" not in sources] == []


def test_every_runner_rule_names_the_tools_it_covers() -> None:
    """A rule added for a runner's format says which tools print it, and every tool of the
    cases is named by some rule, so a format without a rule shows up here."""
    rules = shipped_rules().view("chunking").log.active_error_rules
    named = {tool for rule in rules for tool in rule.tools}
    assert {case["tool"] for case in CASES} - named == set()


def test_a_vitest_run_answers_which_tests_failed(project_dir) -> None:
    """The case the issue reports: vitest's `×` test lines and `→` messages, through a real
    store and the intent reply an agent gets."""
    output = (RUNNERS / "outputs" / "vitest-verbose-semver.txt").read_text(encoding="utf-8")
    reply = intent_reply(
        Workspace(project_dir), output, intent="which tests failed and why", label="vitest"
    )
    assert HEADING in reply
    assert "semver.coerce > returns the version of a non-version string" in reply
    assert "→ Cannot read properties of null (reading 'version')" in reply
