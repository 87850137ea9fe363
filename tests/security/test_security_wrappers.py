"""Wrapped commands are judged as the command they run: `timeout 5 rm -rf /` is `rm -rf /`.

The wrappers are data (the security pack's `command_wrappers`); these tests run the pack's own
examples, judge real commands against the shipped policies and real settings files, and show
that what cannot be parsed still meets the deny rules.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from capy.rules import build_ruleset
from capy.security.wrappers import allow_forms, unwrap, wrapped_commands


def _wrappers():
    return build_ruleset().view("security").command_wrappers


WRAPPERS = _wrappers()
UNWRAP_EXAMPLES = [
    (wrapper.id, example.command, example.runs)
    for wrapper in WRAPPERS.wrappers
    for example in wrapper.examples.unwrap
]
KEEP_EXAMPLES = [
    (wrapper.id, command) for wrapper in WRAPPERS.wrappers for command in wrapper.examples.keep
]


@pytest.mark.parametrize(("rule_id", "command", "runs"), UNWRAP_EXAMPLES)
def test_every_unwrap_example_of_the_pack(rule_id, command, runs):
    found = unwrap(command, WRAPPERS)
    assert found is not None and found.wrapper.id == rule_id
    assert found.certain, f"{command!r} should parse without guessing"
    assert found.commands == runs


@pytest.mark.parametrize(("rule_id", "command"), KEEP_EXAMPLES)
def test_every_keep_example_runs_nothing(rule_id, command):
    found = unwrap(command, WRAPPERS)
    assert found is None or found.commands == ()


def test_the_pack_covers_the_wrappers_the_issue_names():
    for program in [
        "timeout", "nice", "env", "sudo", "xargs", "nohup", "time", "command", "exec",
        "stdbuf", "ionice", "bash", "sh", "zsh",
    ]:  # fmt: skip
        assert WRAPPERS.find(program) is not None, program


WRAPPED_ROOT_DELETES = [
    "timeout 5 rm -rf /",
    "nice -n 5 rm -rf /",
    "env FOO=1 rm -rf /",
    "sudo rm -rf /",
    "xargs rm -rf /",
    "nohup rm -rf /",
    "time rm -rf /",
    "command rm -rf /",
    "exec rm -rf /",
    "stdbuf -oL rm -rf /",
    "ionice -c 3 rm -rf /",
    "bash -c 'rm -rf /'",
    'sh -c "cd /tmp && rm -rf /"',
    "zsh -c 'rm -rf / --no-preserve-root'",
    "FOO=1 BAR=2 timeout 5 rm -rf /",
    'MSG="two words" timeout 5 rm -rf /',  # a quoted value must not hide the program
    " ".join(f"V{index}=1" for index in range(40)) + " nice rm -rf /",
    "/usr/bin/timeout 5 rm -rf /",
    "'timeout' 5 rm -rf /",
    "git status && timeout 5 rm -rf /",
    "echo $(nice rm -rf /)",
    "sudo timeout 5 env FOO=1 bash -c 'nice -n 3 rm -rf /'",
    "eval 'rm -rf /'",
    "watch -n 1 'rm -rf /'",
]


@pytest.mark.parametrize("command", WRAPPED_ROOT_DELETES)
def test_builtin_deny_sees_through_wrappers(command, settings):
    decision = settings.check_command(command)
    assert decision.decision == "deny", decision
    assert decision.rule.startswith("security.deny-")


@pytest.mark.parametrize("command", ["timeout 5 git push origin main", "bash -c 'git push'"])
def test_settings_deny_sees_through_wrappers(command, settings):
    settings.write("project", deny=["Bash(git push *)"])
    decision = settings.check_command(command)
    assert (decision.decision, decision.rule) == ("deny", "Bash(git push *)")
    assert decision.source == ".claude/settings.json"


@pytest.mark.parametrize(
    "command",
    [
        "timeout --not-an-option 5 10 rm -rf /",  # unknown option: it may take a value
        "env -S 'rm -rf /'",  # opaque: env splits the string itself
        "sudo -s rm -rf /",  # opaque: a shell runs the rest
        "timeout 5 rm -rf / 'unterminated",  # quoting that does not parse
        "bash --not-an-option -c 'cd / && rm -rf /'",
        "nice -10 rm -rf /",  # the old `-N` form, which the pack does not list
    ],
)
def test_a_wrapper_that_cannot_be_parsed_fails_closed(command, settings):
    decision = settings.check_command(command)
    assert decision.decision == "deny", decision


def test_nesting_past_the_depth_bound_still_meets_deny(settings):
    command = "timeout 1 " * (WRAPPERS.max_depth + 5) + "rm -rf /"
    assert settings.check_command(command).decision == "deny"


def test_a_hostile_chain_of_unparseable_wrappers_is_bounded(settings):
    """Every suffix may open another wrapper; repeats are dropped, so the work stays linear."""
    command = "timeout -x " * 100 + "rm -rf /"
    found = wrapped_commands(command, WRAPPERS)
    assert "rm -rf /" in found.commands
    assert len(found.commands) <= 2 * len(command.split())
    assert settings.check_command(command).decision == "deny"
    longer = "timeout -x " * WRAPPERS.fail_closed_max_words + "rm -rf /"
    assert settings.check_command(longer).decision == "ask"


def test_too_many_words_to_read_fail_closed_asks(settings):
    command = "timeout --odd 5 echo " + "word " * (WRAPPERS.fail_closed_max_words + 10)
    decision = settings.check_command(command)
    assert decision.decision == "ask", decision
    assert "wrapper" in decision.reason


def test_a_long_but_parseable_wrapped_command_is_judged_normally(settings):
    settings.write("project", allow=["Bash(timeout *)"])
    command = "timeout 5 echo " + "word " * 100_000
    assert settings.check_command(command).decision == "allow"


def test_a_shell_without_dash_c_runs_a_script_and_is_not_unwrapped(settings):
    assert unwrap("bash deploy.sh", WRAPPERS).commands == ()
    assert settings.check_command("bash rm -rf /").decision == "none"


# --- allow rules see through only what Claude Code strips -----------------------------------
# code.claude.com/docs/en/permissions, "Wrappers": "Before matching Bash rules, Claude Code
# strips a fixed set of wrappers, so a rule like `Bash(npm test *)` also matches
# `timeout 30 npm test`. The stripped wrappers are timeout, time, nice, nohup, and stdbuf, plus
# the shell builtins command and builtin, and zsh's noglob." "Bare xargs is also stripped ...
# Stripping applies only when xargs has no flags."

ALLOW_CASES = [
    ("timeout 30 npm test", ["Bash(npm test *)"], "allow"),
    ("nice -n 5 nohup npm test", ["Bash(npm test *)"], "allow"),
    ("time npm test -- --ci", ["Bash(npm test *)"], "allow"),
    ("stdbuf -oL npm test", ["Bash(npm test *)"], "allow"),
    ("command npm test", ["Bash(npm test *)"], "allow"),
    ("noglob npm test", ["Bash(npm test *)"], "allow"),
    ("xargs grep pattern", ["Bash(grep *)"], "allow"),
    # "an invocation like xargs -n1 grep pattern is matched as an xargs command"
    ("xargs -n1 grep pattern", ["Bash(grep *)"], "none"),
    # "the query form command -v, which looks up a command rather than running one"
    ("command -v npm", ["Bash(npm *)"], "none"),
    # Not in the list: "a rule like Bash(devbox run *) matches whatever comes after run"; sudo,
    # setsid, env, bash -c and the exec wrappers need a rule naming the wrapper.
    ("setsid npm test", ["Bash(npm test *)"], "none"),
    ("sudo npm test", ["Bash(npm test *)"], "ask"),  # the built-in security.ask-sudo
    ("env CI=1 npm test", ["Bash(npm test *)"], "none"),
    ("bash -c 'npm test'", ["Bash(npm test *)"], "none"),
    ("ionice -c3 npm test", ["Bash(npm test *)"], "none"),
    ("timeout 30 npm test", ["Bash(timeout *)"], "allow"),
    # An unknown option makes the parse uncertain, so allow rules do not see through it.
    ("timeout --odd 30 npm test", ["Bash(npm test *)"], "none"),
    # "An allow rule won't match past an assignment of any other variable" (capy keeps no list
    # of known-safe variables, so no assignment is looked past: stricter, never looser).
    ("FOO=1 timeout 30 npm test", ["Bash(npm test *)"], "none"),
]


@pytest.mark.parametrize(("command", "allow", "expected"), ALLOW_CASES)
def test_allow_rules_see_through_only_the_stripped_wrappers(command, allow, expected, settings):
    settings.write("project", allow=allow)
    assert settings.check_command(command).decision == expected


def test_deny_wins_over_an_allow_seen_through_a_wrapper(settings):
    settings.write("project", deny=["Bash(npm publish *)"], allow=["Bash(npm *)"])
    assert settings.check_command("timeout 60 npm publish").decision == "deny"


def test_allow_forms_strip_outermost_first():
    assert allow_forms("timeout 5 nice -n 2 make", WRAPPERS) == ["nice -n 2 make", "make"]


# --- the wrapper list is data -------------------------------------------------------------------

_DISABLE_TIMEOUT = """\
pack: no-timeout
schema: overlay.v1
version: 1.0.0
description: A user who turns the timeout wrapper off (from a project it would be ignored).
requires: ">=0.1"
extends: security
disable: [security.wrapper-timeout]
"""


def test_an_overlay_can_disable_a_wrapper(tmp_path: Path, settings):
    from capy.security import check_command

    overlay = tmp_path / "no-timeout.yaml"
    overlay.write_text(_DISABLE_TIMEOUT)
    ruleset = build_ruleset([(overlay, "user")])
    assert ruleset.ok, [str(item) for item in ruleset.diagnostics]
    kwargs = {"managed_dir": settings.managed, "ruleset": ruleset}
    assert check_command("timeout 5 rm -rf /", **kwargs).decision == "none"
    assert check_command("nice rm -rf /", **kwargs).decision == "deny"


_BREAK_NICE = """\
pack: broken-nice
schema: overlay.v1
version: 1.0.0
description: An override that forgets nice's -n takes a value.
requires: ">=0.1"
extends: security
patch:
  command_wrappers:
    wrappers:
      - id: security.wrapper-nice
        value_options: ["--adjustment"]
"""


def test_validate_runs_wrapper_examples_and_names_the_failing_one(tmp_path: Path):
    overlay = tmp_path / "broken-nice.yaml"
    overlay.write_text(_BREAK_NICE)
    ruleset = build_ruleset([(overlay, "user")], examples=True)
    failed = [item for item in ruleset.diagnostics if item.code == "example-failed"]
    assert failed and {item.rule_id for item in failed} == {"security.wrapper-nice"}
    assert any("nice -n 5 rm -rf /" in item.message for item in failed)
    # The shipped pack alone passes every wrapper example.
    assert not [
        item for item in build_ruleset(examples=True).diagnostics if item.code == "example-failed"
    ]
