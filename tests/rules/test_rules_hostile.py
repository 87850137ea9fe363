"""Hostile rule files: each is refused with one located error, quickly, by `capy rules validate`
and by every command that loads the rules in force (the hook included), never a hang.

Every run is a real subprocess under a timeout (tests/hostile_helpers.py).
"""

from __future__ import annotations

import os
import re
import time

import pytest

from capy.rules.backtracking import risky_shape
from capy.rules.regextrial import slow_patterns
from tests.hostile_helpers import assert_clean_refusal, assert_no_crash, run_capy

HEADER = (
    "pack: team-secrets\nschema: overlay.v1\nversion: 1.0.0\n"
    "description: A hostile overlay for the tests.\nrequires: '>=0.1'\nextends: secrets\n"
)


def _billion_laughs() -> str:
    text = HEADER + 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    previous = "a"
    for name in "bcdefghi":
        text += f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n"
        previous = name
    return text


# name -> (file content, the error code the located message carries)
HOSTILE_PACKS = {
    "billion-laughs": (_billion_laughs(), "yaml-too-large"),
    "ten-megabyte-comment": (("# " + "x" * 98 + "\n") * 100_000, "yaml-too-large"),
    "deep-flow-nesting": (HEADER + "patch: " + "[" * 50_000 + "]" * 50_000 + "\n", "yaml-too-deep"),
    "deep-block-nesting": (
        HEADER + "patch:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 200)),
        "yaml-too-deep",
    ),
    "top-level-list": ("- pack\n- secrets\n", "wrong-type"),
    "top-level-scalar": ("just words\n", "wrong-type"),
    "nul-bytes": ("pack: x\x00\n", "not-text"),
}


def _write(folder, name: str, content: str):
    path = folder / f"{name}.yaml"
    path.write_text(content, encoding="utf-8")
    return path


@pytest.mark.parametrize("name", sorted(HOSTILE_PACKS))
def test_validate_refuses_a_hostile_pack_file_with_a_located_error(name, tmp_path, warm_rules):
    content, code = HOSTILE_PACKS[name]
    path = _write(tmp_path, name, content)
    started = time.monotonic()
    run = run_capy("rules", "validate", path)
    assert_clean_refusal(run, code=1)
    assert re.search(rf"{re.escape(path.name)}:\d+:\d+: error\[{code}\]", run.stdout), run.stdout
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("name", ["billion-laughs", "ten-megabyte-comment", "deep-flow-nesting"])
def test_a_hostile_user_overlay_stalls_no_command(name, user_rules_dir, project_dir, warm_rules):
    content, _ = HOSTILE_PACKS[name]
    _write(user_rules_dir, name, content)
    run = run_capy("stats", cwd=project_dir)
    assert_clean_refusal(run, code=1, says="rule packs in force have errors")
    hook = run_capy(
        "hook", "PreToolUse", stdin=b'{"tool_name": "Bash", "tool_input": {"command": "ls"}}'
    )
    assert_no_crash(hook)
    assert hook.code == 0, hook.stderr  # a hook never breaks the agent: it passes through


@pytest.mark.parametrize("special", ["fifo", "dev-zero"])
def test_validate_refuses_what_is_not_a_regular_file(special, tmp_path, warm_rules):
    if special == "fifo":
        target = tmp_path / "pack.yaml"
        os.mkfifo(target)
    else:
        target = "/dev/zero"
    run = run_capy("rules", "validate", target)
    assert_clean_refusal(run, code=1)
    assert "not a regular file" in run.stdout, run.stdout


# Patterns that backtrack catastrophically (exponential or high-degree polynomial time).
CATASTROPHIC = [
    r"(a+)+$",
    r"(?:[a-z]+\s?)+=",
    r"(\w+,?)+x",
    r"(a|aa)+b",
    r"(a|a?)+b",
    r"(?:a|b|ab)+c",
    r"(x+x+)+y",
    r"^(([a-z])+.)+[A-Z]([a-z])+$",
    r"(a{1,3})+b",
    r"(?:(?:\d+)-?)+#",
]
# Patterns of the same look that are safe: a delimiter fixes each repetition, or the repeat
# is possessive or atomic.
SAFE = [
    r"(ab+)+",
    r"(\d+,)+",
    r"(?:\\.|[^\\\n]){1,2000}",
    r"(?:[a-z]+\.)+com",
    r"(?>a+)+",
    r"(?:a++b?)+",
    r"(ab?)+",
    r"(?:-?\d)+",
    r"(?:[ \t]+[^\n]*\n){0,50}?",
    r"(?:[ \t]+[\w.-]+:[ \t]*(?:\n|$)){1,50}",
    r"\bghp_[A-Za-z0-9]{36}\b",
]


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_the_static_check_flags_catastrophic_shapes(pattern):
    assert risky_shape(pattern)


@pytest.mark.parametrize("pattern", SAFE)
def test_the_static_check_leaves_safe_shapes_alone(pattern):
    assert risky_shape(pattern) is None


def _overlay_with_pattern(pattern: str) -> str:
    quoted = pattern.replace("'", "''")
    return HEADER + (
        "patch:\n  detectors:\n"
        "    - id: team-secrets.hostile\n      status: active\n      since: '1.0.0'\n"
        "      description: A pattern that backtracks on purpose.\n"
        "      kind: secret\n      keywords: [token]\n"
        f"      pattern: '{quoted}'\n"
        "      examples:\n        match: ['token abc=']\n        no_match: ['nothing here']\n"
    )


@pytest.mark.parametrize(
    "pattern",
    [r"(?:[a-z]+\s?)+=", r"\s*\s*\s*\s*\s*\s*\s*x"],
    ids=["nested-quantifier", "polynomial-only-the-trial-catches"],
)
def test_validate_rejects_a_backtracking_regex_with_its_rule_id(pattern, tmp_path, warm_rules):
    path = _write(tmp_path, "hostile-regex", _overlay_with_pattern(pattern))
    run = run_capy("rules", "validate", path, timeout=90)
    assert_clean_refusal(run, code=1)
    assert "error[catastrophic-regex] team-secrets.hostile:" in run.stdout, run.stdout
    assert "hint:" in run.stdout


def test_the_timed_trial_catches_what_the_static_check_misses():
    patterns = [r"\bsafe\d+", r"\s*\s*\s*\s*\s*\s*\s*x", r"[a-z]+@[a-z]+"]
    assert risky_shape(patterns[1]) is None
    assert slow_patterns(patterns, seconds=1.0) == {1}


def test_every_shipped_pattern_passes_the_timed_trial():
    from capy.rules import load_rules
    from capy.rules.lint import detecting_rules

    rules = load_rules()
    patterns = [
        rule["pattern"]
        for pack in rules.packs.values()
        for _, _, rule in detecting_rules(pack)
        if isinstance(rule.get("pattern"), str) and rule.get("kind") != "command"
    ]
    assert len(patterns) > 100
    slow = slow_patterns(patterns)
    assert not slow, [patterns[index] for index in slow]


OVERLAY_HEAD = (
    "pack: team-x\nschema: overlay.v1\nversion: 1.0.0\n"
    "description: A hostile overlay for the tests.\nrequires: '>=0.1'\n"
)
# Wrong types where the merge, the lint or the examples runner reads them before the schema's
# verdict is in: each must come back as located errors, never a crash.
WRONG_SHAPES = {
    "extends-a-list": "extends: [secrets]\n",
    "extends-a-mapping": "extends: {a: 1}\n",
    "extends-a-number": "extends: 5\n",
    "patch-a-list": "extends: secrets\npatch: [1]\n",
    "disable-a-mapping": "extends: secrets\ndisable: {a: 1}\n",
    "disable-nested-lists": "extends: secrets\ndisable: [secrets.github-pat, 5, [x]]\n",
    "rule-id-a-list": "extends: secrets\npatch: {detectors: [{id: [x]}]}\n",
    "rule-id-a-mapping": "extends: chunking\npatch: {log: {error_rules: [{id: {a: 1}}]}}\n",
    "examples-a-list": "extends: secrets\npatch: {detectors: [{id: secrets.github-pat, "
    "examples: [1]}]}\n",
    "entropy-a-string": "extends: secrets\npatch: {detectors: [{id: secrets.github-pat, "
    "entropy: x}]}\n",
    "pattern-a-list": "extends: secrets\npatch: {detectors: [{id: secrets.github-pat, "
    "pattern: [1]}]}\n",
}


@pytest.mark.parametrize("name", sorted(WRONG_SHAPES))
def test_wrong_shapes_in_an_overlay_are_located_errors(name, tmp_path, warm_rules):
    path = _write(tmp_path, name, OVERLAY_HEAD + WRONG_SHAPES[name])
    run = run_capy("rules", "validate", path)
    assert_clean_refusal(run, code=1)
    assert re.search(rf"{re.escape(path.name)}:\d+:\d+: error\[", run.stdout), run.stdout


@pytest.mark.parametrize("name", ["extends-a-list", "rule-id-a-list", "rule-id-a-mapping"])
def test_wrong_shapes_in_a_user_overlay_break_no_command(name, user_rules_dir, warm_rules):
    _write(user_rules_dir, name, OVERLAY_HEAD + WRONG_SHAPES[name])
    assert_clean_refusal(run_capy("stats"), code=1, says="rule packs in force have errors")
    hook = run_capy(
        "hook", "PreToolUse", stdin=b'{"tool_name": "Bash", "tool_input": {"command": "ls"}}'
    )
    assert_no_crash(hook)
    assert hook.code == 0, hook.stderr
