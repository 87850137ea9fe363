"""Claude Code style command patterns (`git push:*`, `npm run *`) as regular expressions.

One reading for every pack and every settings file, following Claude Code's documented Bash
rule syntax (https://code.claude.com/docs/en/permissions, "Wildcard patterns"):

- `*` matches any text, spaces included, and may sit anywhere: `git * main`, `* --version`.
- "A `*` at the end, with a space before it, also matches the bare command ... only when the
  trailing `*` is the rule's only wildcard": `npm run test *` matches `npm run test` and
  `npm run test --ci` but not `npm run testx`; `* --help *` needs something after `--help`.
- "The space before a trailing `*` is part of the rule": `git diff*` (no space) also matches
  `git diffx` and `git difftool`.
- "The `:*` suffix is an equivalent way to write a trailing wildcard, so `Bash(ls:*)` matches
  the same commands as `Bash(ls *)`", and it "is only recognized at the end of a pattern": in
  `git:* push` the colon is literal. When a `:*` pattern also has wildcards before it (the docs
  show none; capy's built-in `git push * -f:*` is one), the prefix may stand alone or be
  followed by a space and anything, which is never narrower than the docs' reading.
- `\\*` is a literal star and `\\\\` a literal backslash. The docs do not mention escapes;
  Claude Code's matcher (utils/permissions/shellRuleMatching.ts) implements them, and without
  them a rule could not name a command that contains a star.
- Anything else is matched exactly, after runs of whitespace are collapsed on both sides.
"""

from __future__ import annotations

# One whitespace rule for rules and the command reader (which a hook loads without `re`).
from capy.security.shellwords import normalise_command

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

__all__ = [
    "command_matches",
    "command_pattern_regex",
    "command_pattern_source",
    "normalise_command",
]


def command_pattern_regex(pattern: str) -> re.Pattern[str]:
    """Compile a permission-rule command pattern (see the module docstring for the forms)."""
    import re

    return re.compile(command_pattern_source(pattern), re.DOTALL)


def command_pattern_source(pattern: str) -> str:
    """The regex text of a command pattern, compiled with DOTALL (what a hook hands to
    `capy.packregex` so it needs no `re`)."""
    import re

    text = normalise_command(pattern)
    if text.endswith(":*"):
        body = _wildcards(_split_unescaped_stars(text[:-2].rstrip()))
        return f"^{body}(?: .*)?$"
    pieces = _split_unescaped_stars(text)
    if len(pieces) == 2 and pieces[1] == "" and pieces[0].endswith(" "):
        # The rule's only wildcard, at the end after a space: the arguments are optional.
        return f"^{re.escape(pieces[0][:-1])}(?: .*)?$"
    return f"^{_wildcards(pieces)}$"


def command_matches(pattern: str, command: str) -> bool:
    return command_pattern_regex(pattern).match(normalise_command(command)) is not None


def _wildcards(pieces: list[str]) -> str:
    import re

    return ".*".join(re.escape(piece) for piece in pieces)


def _split_unescaped_stars(text: str) -> list[str]:
    """The literal runs between unescaped `*`s, with `\\*` and `\\\\` unescaped."""
    pieces, current, index = [], [], 0
    while index < len(text):
        char = text[index]
        if char == "\\" and text[index + 1 : index + 2] in ("*", "\\"):
            current.append(text[index + 1])
            index += 2
            continue
        if char == "*":
            pieces.append("".join(current))
            current = []
        else:
            current.append(char)
        index += 1
    pieces.append("".join(current))
    return pieces
