"""Rule parsing never raises, whatever a settings file holds, and matching follows the forms."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capy.security.permissions import RuleKind, command_rule_regex, parse_rule, path_candidates
from capy.security.settings_files import Scope, SettingsFile

SOURCE = SettingsFile(Path("/p/.claude/settings.json"), Scope.PROJECT, Path("/p"))
TOOLS = st.sampled_from(["Bash", "Read", "Edit", "Write", "WebFetch", "Task", "mcp__x__y", ""])
SPEC = st.text(alphabet=st.sampled_from(list("ab/*?[]!-:\\~. ()")), max_size=20)


@settings(max_examples=400, deadline=None)
@given(TOOLS, st.one_of(st.none(), SPEC), st.sampled_from(["deny", "ask", "allow"]))
def test_parse_and_match_never_raise(tool, spec, decision):
    text = tool if spec is None else f"{tool}({spec})"
    rule = parse_rule(text, decision, SOURCE)
    assert rule.broken or rule.tool == tool
    rule.matches_command("git status")
    rule.matches_domain("example.com")
    if rule.kind is RuleKind.PATH:
        rule.path_regex(Path("/p"), Path("/h")).match("/p/a/b")


@pytest.mark.parametrize("entry", [None, 3, ["Bash"], {"tool": "Bash"}, "", "(ls)", "Bash(ls"])
def test_entries_that_are_not_rules_are_broken(entry):
    assert parse_rule(entry, "deny", SOURCE).broken


@pytest.mark.parametrize(
    ("spec", "command", "matches"),
    [
        ("git  push:*", "git push   origin", True),  # whitespace is normalised on both sides
        ("echo \\*", "echo *", True),  # an escaped star is a literal
        ("echo \\*", "echo hello", False),
        ("docker run * --rm", "docker run -it alpine --rm", True),
        ("* --version", "node --version", True),
        ("npm test", "npm test\nrm -rf /", False),  # exact means the whole text
        # A sole trailing ` *` is a word-boundary prefix that also matches the bare command.
        ("npm run test *", "npm run test", True),
        ("npm run test *", "npm run test -- --ci", True),
        ("npm run test *", "npm run testx", False),
        ("npm run test *", "npm run tes", False),
        # Without the space the star is a plain wildcard: no word boundary.
        ("git diff*", "git diff", True),
        ("git diff*", "git difftool", True),
        ("git diff*", "git dif", False),
        # `:*` is the same as a trailing ` *`, and only at the end.
        ("ls:*", "ls", True),
        ("ls:*", "ls -la", True),
        ("ls:*", "lsof", False),
        ("git:* push", "git push", False),
        ("git:* push", "git:x push", True),  # the colon is a literal character there
        # Two wildcards: the trailing one is no longer optional ("* --help *" vs "npm --help").
        ("* --help *", "npm --help x", True),
        ("* --help *", "npm --help", False),
        ("git log * main", "git log main", False),
        ("git log * main", "git log --oneline main", True),
        ("rm \\\\*", "rm \\\\x", True),  # an escaped backslash is a literal, the star a wildcard
    ],
)
def test_command_forms(spec, command, matches):
    assert bool(command_rule_regex(spec).match(" ".join(command.split()))) is matches


def test_settings_rules_and_builtin_policies_read_patterns_alike():
    """One reading of the syntax for users' rules and the packs' policies."""
    from capy.rules.commands import command_matches

    for spec, command in [("npm run test *", "npm run test"), ("ls:*", "lsof"), ("a*b", "axxb")]:
        assert command_matches(spec, command) is bool(command_rule_regex(spec).match(command))


def test_path_candidates_fold_dotdot_and_follow_symlinks(tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("x")
    (tmp_path / "link.txt").symlink_to(target)
    assert path_candidates("a/../b", Path("/p"), Path("/h")) == ("/p/b",)
    assert path_candidates("~/x", Path("/p"), Path("/h")) == ("/h/x",)
    link, real = path_candidates("link.txt", tmp_path, Path("/h"))
    assert (link, real) == (str(tmp_path / "link.txt"), str(target.resolve()))
