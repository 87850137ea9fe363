"""What a command run through a wrapper really runs: `timeout 5 rm -rf /` runs `rm -rf /`.

The security pack's `command_wrappers` section says, per wrapper program, which options take a
value, how many operands precede the command, and whether the command is the remaining words
or a shell command line (`bash -c LINE`, `eval WORDS`). This module only interprets that data.

Two readings, as in Claude Code (code.claude.com/docs/en/permissions, "Wrappers"):
- deny and ask rules see through every wrapper, nested up to `max_depth`, past leading
  `NAME=value` assignments. What cannot be parsed is read fail-closed: every word-suffix after
  the wrapper is judged as a command too, so `timeout --odd 5 rm -rf /` still meets
  `rm -rf /`; past `fail_closed_max_words` words the result says so and the caller asks.
- allow rules see through only the wrappers the pack marks `see-through` (option-less for
  `see-through-when-bare`), only when the parse was certain and no assignment leads.
"""

from __future__ import annotations

from capy.packregex import pack_regex
from capy.security.shellwords import LazyWords, is_assignment

# No `re`, `typing` or `dataclasses` at import, and the wrapper's `runs` is compared by value:
# a hook reads commands here (memory's blocking) with the pack's wrappers as plain data, on a
# path that must cost little more than a bare start.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Quote characters are dropped from a program word, so `'timeout'` and `t"ime"out` name timeout.
_QUOTING = str.maketrans("", "", "'\"\\")
# WrapperRuns values (capy.rules.views.security), which the pack's enum equals.
_RUNS_COMMAND = "command"
_RUNS_SHELL_STRING = "shell-string"


class Unwrapped:
    """One level of unwrapping."""

    __slots__ = ("bare", "certain", "commands", "fallback", "overflow", "wrapper")

    def __init__(
        self,
        wrapper: Any,  # the pack's CommandWrapper
        commands: tuple[str, ...],  # what it runs: the command as written, or a line's parts
        certain: bool = True,  # False: an unknown or opaque option, or unparsed quoting
        bare: bool = True,  # no options between the wrapper and the command
        fallback: tuple[str, ...] = (),  # fail-closed reads: every word-suffix after it
        overflow: bool = False,  # too many words to read fail-closed
    ) -> None:
        self.wrapper, self.commands, self.certain = wrapper, commands, certain
        self.bare, self.fallback, self.overflow = bare, fallback, overflow


class WrappedCommands:
    """Every command a part runs through wrappers, at every depth."""

    __slots__ = ("_seen", "commands", "overflow")

    def __init__(self) -> None:
        self.commands: list[str] = []
        self.overflow = False  # some wrapper could be read neither exactly nor fail-closed
        self._seen: set[str] = set()

    def add(self, command: str) -> bool:
        """Note a command; False when it was already there (suffixes of suffixes repeat)."""
        if command in self._seen:
            return False
        self._seen.add(command)
        self.commands.append(command)
        return True


def wrapped_commands(part: str, wrappers: Any) -> WrappedCommands:
    """The commands `part` runs through wrappers (not `part` itself), for deny and ask rules."""
    found = WrappedCommands()
    # Every fail-closed suffix may open another wrapper; one budget of unwraps per part keeps a
    # hostile `timeout -x timeout -x ...` from multiplying the work.
    _collect(part, wrappers, 0, [wrappers.fail_closed_max_words], found)
    return found


def _collect(
    part: str, wrappers: Any, depth: int, budget: list[int], found: WrappedCommands
) -> None:
    if budget[0] <= 0:
        found.overflow = found.overflow or unwrap(part, wrappers) is not None
        return
    unwrapped = unwrap(part, wrappers)
    if unwrapped is None:
        return
    budget[0] -= 1
    found.overflow = found.overflow or unwrapped.overflow
    for command in (*unwrapped.commands, *unwrapped.fallback):
        if not found.add(command):
            continue
        if depth + 1 < wrappers.max_depth:
            _collect(command, wrappers, depth + 1, budget, found)
            continue
        # Nested deeper than the pack allows: read what is left fail-closed.
        suffixes = word_suffixes(command, wrappers.fail_closed_max_words, start=1)
        found.overflow = found.overflow or suffixes is None
        for suffix in suffixes or ():
            found.add(suffix)


def allow_forms(part: str, wrappers: Any, depth: int = 0) -> list[str]:
    """`part` with the wrappers Claude Code strips for allow rules removed, outermost first."""
    from capy.rules.views.security import AllowRules

    unwrapped = unwrap(part, wrappers, after_assignments=False)
    if unwrapped is None or not unwrapped.certain or depth + 1 >= wrappers.max_depth:
        return []
    wrapper = unwrapped.wrapper
    if wrapper.runs != _RUNS_COMMAND or len(unwrapped.commands) != 1:
        return []
    if wrapper.allow_rules is AllowRules.AS_WRITTEN or (
        wrapper.allow_rules is AllowRules.SEE_THROUGH_WHEN_BARE and not unwrapped.bare
    ):
        return []
    inner = unwrapped.commands[0]
    return [inner, *allow_forms(inner, wrappers, depth + 1)]


def unwrap(part: str, wrappers: Any, *, after_assignments: bool = True) -> Unwrapped | None:
    """What the wrapper opening `part` runs; None when no wrapper opens it."""
    if not _may_open_with_wrapper(part, wrappers, after_assignments):
        return None  # the common case, decided without tokenising a possibly huge command
    words = LazyWords(part)
    index = 0
    while after_assignments and (word := words.get(index)) and is_assignment(word.value):
        index += 1
    first = words.get(index)
    wrapper = wrappers.find(first.value.translate(_QUOTING)) if first else None
    if wrapper is None:
        return None
    return _read_arguments(part, wrapper, words, index + 1, wrappers)


def _may_open_with_wrapper(part: str, wrappers: Any, after_assignments: bool) -> bool:
    """A rough look at the first word, so a megabyte-long command that opens with no wrapper
    costs nothing. Leading assignments (whose quoted values may hold spaces) need the precise
    reading, so they always say maybe."""
    first = pack_regex(r"\S+").search(part)
    if first is None:
        return False
    word = first.group()
    if after_assignments and is_assignment(word):
        return True
    return wrappers.find(word.translate(_QUOTING)) is not None


def _read_arguments(
    part: str, wrapper: Any, words: LazyWords, start: int, wrappers: Any
) -> Unwrapped:
    options = _Options(wrapper)
    index = options.skip(words, start)
    if options.query:
        return Unwrapped(wrapper, ())
    index += wrapper.operands
    commands = _commands(part, wrapper, words, index, options.shell_flag)
    if not (words.broken or options.unknown or options.opaque):
        return Unwrapped(wrapper, commands, bare=options.bare)
    limit = wrappers.fail_closed_max_words
    suffixes = word_suffixes(part, limit, start=start, words=words)
    lines = _word_lines(wrapper, words, start, limit) if suffixes is not None else ()
    return Unwrapped(
        wrapper,
        () if words.broken else commands,
        certain=False,
        bare=options.bare,
        fallback=(*(suffixes or ()), *lines),
        overflow=suffixes is None,
    )


def _commands(
    part: str, wrapper: Any, words: LazyWords, index: int, shell_flag: bool
) -> tuple[str, ...]:
    from capy.security.shellsplit import split_command

    first = words.get(index)
    if first is None:
        return ()
    if wrapper.runs == _RUNS_COMMAND:
        return (part[first.start :].strip(),)
    if wrapper.runs == _RUNS_SHELL_STRING:
        # Without the flag the shell runs a script file, whose commands capy cannot see.
        return tuple(split_command(first.value)) if shell_flag else ()
    return tuple(split_command(" ".join(word.value for word in words.rest(index))))


def _word_lines(wrapper: Any, words: LazyWords, start: int, limit: int) -> tuple[str, ...]:
    """Fail-closed read of a shell-running wrapper: any of its words may be a command line."""
    from capy.security.shellsplit import split_command

    if wrapper.runs == _RUNS_COMMAND:
        return ()
    candidates = (words.get(index) for index in range(start, start + limit))
    return tuple(
        part
        for word in candidates
        if word and " " in word.value
        for part in split_command(word.value)
    )


def word_suffixes(
    text: str, limit: int, *, start: int = 0, words: LazyWords | None = None
) -> tuple[str, ...] | None:
    """The text from each word on (from word `start`), or None past `limit` words."""
    words = words if words is not None else LazyWords(text)
    if words.get(start + limit) is not None:
        return None
    return tuple(text[word.start :].strip() for word in words.rest(start))


class _Options:
    """Walks the options between a wrapper and what it runs, noting what it met."""

    def __init__(self, wrapper: Any) -> None:
        self.wrapper = wrapper
        self.unknown = self.opaque = self.query = self.shell_flag = False
        self.bare = True

    def skip(self, words: LazyWords, index: int) -> int:
        """The index of the first word after the options (and assignments, where allowed)."""
        while (found := words.get(index)) is not None:
            word = found.value
            if self.wrapper.assignments and is_assignment(word):
                index += 1
                continue
            if word == "--":
                self.bare = False
                return index + 1
            if not self._is_option(word):
                return index
            self.bare = False
            index += self._consume(word)
            if self.query or self.opaque:
                return index
        return index

    def _is_option(self, word: str) -> bool:
        if word in self.wrapper.flag_options:
            return True
        return len(word) > 1 and (word[0] == "-" or (word[0] == "+" and word[1].isalpha()))

    def _consume(self, word: str) -> int:
        """How many words the option at hand takes (itself, and its value if separate)."""
        wrapper = self.wrapper
        name = word.split("=", 1)[0] if word.startswith("--") else word
        if name in wrapper.query_options:
            self.query = True
        elif name in wrapper.opaque_options:
            self.opaque = True
        elif name in wrapper.value_options:
            return 1 if "=" in word else 2
        elif name[:2] in wrapper.value_options and not name.startswith("--"):
            return 1  # a value attached to a short option: -n5, -oL, -uroot
        elif name not in wrapper.flag_options and not self._flag_cluster(name):
            self.unknown = True
        return 1

    def _flag_cluster(self, word: str) -> bool:
        """`-ec` is `-e -c`; the shell's command-line flag may sit anywhere in a cluster."""
        letter = self.wrapper.shell_string_flag
        if word == f"-{letter}":
            self.shell_flag = True
            return True
        if word.startswith("--") or len(word) < 3:
            return False
        letters = word[1:]
        if all(
            f"{word[0]}{char}" in self.wrapper.flag_options or char == letter for char in letters
        ):
            self.shell_flag = self.shell_flag or (letter is not None and letter in letters)
            return True
        return False
