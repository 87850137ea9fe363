"""Delimited command literals keep everything up to their own closing delimiter."""

from __future__ import annotations

import pytest

from capy.rules import load_rules
from capy.security.escapes import find_shell_calls


@pytest.mark.parametrize(
    ("language", "code", "command"),
    [
        ("perl", "my $x = qx(rm -rf /);", "rm -rf /"),
        ("perl", "my $x = qx[cat /etc/passwd];", "cat /etc/passwd"),
        ("perl", "my $x = qx/ls -la/;", "ls -la"),
        ("perl", "my $x = qx'echo a/b';", "echo a/b"),
        ("ruby", "out = %x(rm -rf /tmp/x)", "rm -rf /tmp/x"),
        ("ruby", "out = %x{ls /}", "ls /"),
        ("ruby", "out = %x|ls /|", "ls /"),
    ],
)
def test_delimited_commands_are_extracted_whole(language, code, command):
    rules = load_rules().view("security").shell_escapes_for(language)
    assert [call.command for call in find_shell_calls(code, rules)] == [command]
