"""Compound commands split the way a shell reads them: operators outside quotes, comments and
heredoc bodies end a command; substitutions and subshells hold commands of their own."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capy.security.shellsplit import dequoted, split_command, without_assignments


@pytest.mark.parametrize(
    ("command", "parts"),
    [
        ("git status && rm -rf /", ["git status", "rm -rf /"]),
        ("a || b ; c | d & e |& f", ["a", "b", "c", "d", "e", "f"]),
        ("a\nb\n\nc", ["a", "b", "c"]),
        # A `b|c)` pattern reads as a pipe: the spurious part `b` can only block an allow.
        ("case $x in a) ls;; b|c) rm -rf /;; esac", ["ls", "b", "rm -rf /"]),
        # Operators inside quotes are text.
        ("echo 'a && b' \"c; d\" e\\;f", ["echo 'a && b' \"c; d\" e\\;f"]),
        ("echo $'it\\'s; fine'", ["echo $'it\\'s; fine'"]),
        # Redirections that contain & or | are not operators.
        ("make 2>&1 | tee log", ["make 2>&1", "tee log"]),
        ("cmd &> out.log; cmd >| clobber", ["cmd &> out.log", "cmd >| clobber"]),
        # Substitutions: the inner command is a part, the outer keeps its text.
        ("echo $(date)", ["date", "echo $(date)"]),
        ("echo `whoami`", ["whoami", "echo `whoami`"]),
        ('echo "$(id -u) and `id -g`"', ["id -u", "id -g", 'echo "$(id -u) and `id -g`"']),
        ("x=$(a $(b $(c)))", ["c", "b $(c)", "a $(b $(c))", "x=$(a $(b $(c)))"]),
        ("diff <(ls a) >(wc -l)", ["ls a", "wc -l", "diff <(ls a) >(wc -l)"]),
        ("echo $((1 + $(id -u)))", ["id -u", "echo $((1 + $(id -u)))"]),
        ("echo '$(not run)' \"\\`not run\\`\"", ["echo '$(not run)' \"\\`not run\\`\""]),
        # Subshells and groups.
        ("(cd sub && make) > log; ls", ["cd sub", "make", "ls"]),
        ("{ rm -rf build; echo done; }", ["rm -rf build", "echo done"]),
        ("if test -f x; then rm x; else touch x; fi", ["test -f x", "rm x", "touch x"]),
        ("while read l; do echo $l; done < f", ["read l", "echo $l", "< f"]),
        # Comments end at the newline; `#` inside a word is not a comment.
        ("ls # && rm -rf /\npwd", ["ls", "pwd"]),
        ("echo a#b", ["echo a#b"]),
        # Heredoc bodies are data; an unquoted body's substitutions still run.
        ("cat <<EOF > f\nrm -rf /\nEOF\nls", ["cat <<EOF > f", "ls"]),
        ("cat <<'EOF'\n$(rm -rf /)\nEOF", ["cat <<'EOF'"]),
        ("cat <<EOF\n$(whoami)\nEOF", ["cat <<EOF", "whoami"]),
        ("cat <<-END\n\trm x\n\tEND\necho after", ["cat <<-END", "echo after"]),
        ("cat <<A <<B\na\nA\nb\nB\nls", ["cat <<A <<B", "ls"]),
        ("cat <<< 'here; string'", ["cat <<< 'here; string'"]),
        # Unterminated input keeps every word in some part.
        ("echo 'open && rm", ["echo 'open && rm"]),
        ("echo $(rm -rf", ["rm -rf", "echo $(rm -rf"]),
        ("", []),
        ("  ;; && ", []),
    ],
)
def test_split_command(command, parts):
    assert split_command(command) == parts


def test_quote_removal_and_assignments():
    assert dequoted("'rm' -rf \"/\"") == "rm -rf /"
    assert dequoted("echo 'open") is None
    assert without_assignments("FOO=1 BAR='a b' rm -rf x") == "rm -rf x"
    assert without_assignments("FOO=1") == ""
    assert without_assignments("ls FOO=1") == "ls FOO=1"


def test_deep_nesting_is_bounded_and_kept_whole():
    command = "$(" * 200 + "rm -rf /" + ")" * 200
    parts = split_command(command)
    assert command in parts  # past the depth limit the whole input is one more part
    assert split_command("(" * 5000) is not None


def test_a_megabyte_command_splits():
    parts = split_command("echo chunk && " * 75_000)
    assert len(parts) == 75_000


_WORD = st.from_regex(r"[a-z0-9_./-]{1,8}", fullmatch=True).filter(
    lambda word: word not in {"if", "then", "else", "elif", "fi", "do", "done", "esac"}
)
_COMMAND = st.lists(_WORD, min_size=1, max_size=4).map(" ".join)
_OPERATOR = st.sampled_from(["&&", "||", ";", "|", "&", "\n", " && ", " ; ", "|&"])


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab $()`'\"\\;&|<>#{}\n\t=-E")), max_size=80))
def test_split_never_raises(text):
    for part in split_command(text):
        assert part == part.strip() and part


@settings(max_examples=300, deadline=None)
@given(st.lists(_COMMAND, min_size=1, max_size=6), st.data())
def test_operators_split_into_exactly_the_commands(commands, data):
    line = commands[0]
    for command in commands[1:]:
        line += data.draw(_OPERATOR) + command
    assert split_command(line) == commands


# (template, whether it can be an argument of another command)
_WRAPS = st.sampled_from(
    [
        *[("$({})", True), ("`{}`", True), ('"$({})"', True), ("<({})", True)],
        *[("({})", False), ("{{ {}; }}", False)],
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_COMMAND, min_size=1, max_size=5), st.data())
def test_nesting_never_loses_a_command_word(commands, data):
    line = commands[0]
    for command in commands[1:]:
        template, as_argument = data.draw(_WRAPS)
        wrapped = template.format(command)
        prefix = "echo " if as_argument and data.draw(st.booleans()) else ""
        line += data.draw(_OPERATOR) + prefix + wrapped
    parts = split_command(line)
    seen = {word for part in parts for word in re.findall(r"[a-z0-9_./-]+", part)}
    assert {word for command in commands for word in command.split()} <= seen
    for command in commands:  # and each command appears on its own as a part
        assert command in parts
