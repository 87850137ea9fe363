"""Whether a command is one a blocking anti-pattern forbids, read the way deny rules read it:
every part, every wrapper (`timeout 5`, `sudo`, `bash -c`), with assignments and quotes removed.

The hook holds the classes as plain data from the digest; a cheap word check runs first, so
only commands that could match pay for the shell parsing."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_QUOTES = str.maketrans("", "", "'\"\\")


def could_match(command: str, block: dict[str, Any]) -> bool:
    """A quick, generous test: the class's literal command words are all there (and its word
    pattern finds something), so the full reading is worth its cost."""
    tokens = {token.translate(_QUOTES) for token in command.split()}
    literal = [
        [word for word in pattern.split() if "*" not in word] for pattern in block["command"]
    ]
    if not any(all(word in tokens for word in words) for words in literal):
        return False
    word = block.get("word")
    if not word:
        return True
    from capy.packregex import pack_regex

    regex = pack_regex(word)
    return any(regex.search(token) for token in tokens) or regex.search(command) is not None


def blocked_by(command: str, block: dict[str, Any], wrappers: Any) -> bool:
    """True when some reading of `command` is a command of the class."""
    from capy.rules.matchers import compile_rule
    from capy.security.readings import command_readings
    from capy.security.shellsplit import split_command

    matcher = compile_rule(
        {"kind": "argv", "command": block["command"], "word": block.get("word")}, {}
    )
    parts = split_command(command)
    readings, _undecidable = command_readings(parts or [command], wrappers, dequote=False)
    return any(matcher.matches(reading) for reading in readings)


def wrappers_from(data: dict[str, Any]) -> Any:
    """The security pack's command wrappers from the digest's plain copy."""
    from capy.rules.views import plain

    plain.enable()  # a hook process has no pydantic views yet: the plain models are enough
    from capy.rules.views.security import CommandWrappers

    return CommandWrappers.model_validate(data)
