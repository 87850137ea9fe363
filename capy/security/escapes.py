"""Find the shell commands a snippet in another language would run.

The security pack holds one regex per API that starts a process (`os.system`, `execSync`,
backticks, `exec.Command`, `System.cmd` ...), with group `cmd` holding the first literal string
argument. Argv-style calls name only the program there (`subprocess.run(["rm", "-rf", "/"])`
gives `rm`), so the literal strings that follow in the same argument list are joined on, and
the policy sees `rm -rf /`, not just `rm`.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any

# Grammar shared by the pack's languages: `, "literal"` (optionally opening a list).
_NEXT_LITERAL = re.compile(
    r"""\s*,\s*\[?\s*(?P<q>["'`])(?P<arg>(?:\\.|(?!(?P=q))[^\\\n]){0,2000})(?P=q)"""
)
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_CONTROL = {"n": "\n", "t": "\t", "r": "\r"}


@dataclass(frozen=True)
class ShellCall:
    rule_id: str
    command: str | None  # None when the command is not a literal (a variable, a call ...)
    offset: int  # where the call starts in the code


def find_shell_calls(code: str, rules: tuple[Any, ...]) -> list[ShellCall]:
    """Every shell call the language's escape rules find, in source order."""
    calls = []
    for rule in rules:
        for match in rule.regex.finditer(code):
            command = match.groupdict().get("cmd")
            if command is not None:
                command = _with_following_literals(code, match, _unescape(command))
            calls.append(ShellCall(rule.id, command, match.start()))
    return sorted(calls, key=lambda call: call.offset)


def _with_following_literals(code: str, match: re.Match[str], first: str) -> str:
    """Join the argv literals after the first (`"git", "push"` is `git push`)."""
    if "q" not in match.re.groupindex or match.end("cmd") != match.end() - 1:
        return first  # shell-style APIs (backticks, qx//, %x()) carry the whole command
    words = [first]
    position = match.end()
    while (following := _NEXT_LITERAL.match(code, position)) is not None:
        words.append(_unescape(following.group("arg")))
        position = following.end()
    if len(words) == 1:
        return first
    return " ".join(shlex.quote(word) for word in words)


def _unescape(literal: str) -> str:
    """Undo the host language's escapes so the shell sees the string the code builds; `\\n` is a
    newline, which a shell reads as a command separator."""
    return _ESCAPE.sub(lambda found: _CONTROL.get(found.group(1), found.group(1)), literal)
