"""Claude Code style command patterns (`git push:*`, `npm run *`) as regular expressions."""

from __future__ import annotations

import re


def normalise_command(command: str) -> str:
    """Collapse runs of whitespace so `git  push` and `git push` are judged alike."""
    return " ".join(command.split())


def command_pattern_regex(pattern: str) -> re.Pattern[str]:
    """Compile a permission-rule command pattern.

    `prefix:*` matches the prefix alone or followed by a space and anything (word boundary, so
    `git push:*` does not match `git pushx`); `*` elsewhere is a wildcard; anything else is exact.
    """
    text = normalise_command(pattern)
    prefix_form = text.endswith(":*")
    if prefix_form:
        text = text[:-2].rstrip()
    body = ".*".join(re.escape(part) for part in text.split("*"))
    if prefix_form:
        body = f"{body}(?:\\s.*)?"
    return re.compile(f"^{body}$", re.DOTALL)


def command_matches(pattern: str, command: str) -> bool:
    return command_pattern_regex(pattern).match(normalise_command(command)) is not None
