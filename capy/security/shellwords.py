"""The words of one simple command, with quotes removed and where each word sits in the text.

`shlex.split` gives the words but not their positions; unwrapping `timeout 5 git commit -m "x"`
needs both: the words to find where the wrapped command starts, the position to hand allow
rules that command exactly as written (`git commit -m "x"`, quotes kept).
"""

from __future__ import annotations

from capy.packregex import pack_regex

# No `re`, `typing` or `dataclasses` at import: a hook reads commands here (memory's blocking)
# on a path that must cost little more than a bare start. capy.packregex hands back the same
# compiled patterns without loading `re`.
_BLANK = " \t\n"
# Inside double quotes a backslash escapes only these (POSIX); elsewhere it is kept.
_DOUBLE_QUOTE_ESCAPES = '$`"\\\n'
_ANSI_C_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "'": "'", "\\": "\\", '"': '"'}
_ASSIGNMENT = r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?="
# Characters that need no care; consumed a run at a time, so a megabyte of words stays fast.
_PLAIN_RUN = r"[^ \t\n\\'\"$`]+"


class Word(tuple):
    """(value, start, end): the word as the program receives it (quotes removed, escapes
    applied) and where it sits in the text. A tuple with names, as `typing.NamedTuple` would
    make it, without importing typing."""

    __slots__ = ()

    def __new__(cls, value: str, start: int, end: int) -> Word:
        return tuple.__new__(cls, (value, start, end))

    @property
    def value(self) -> str:
        return self[0]

    @property
    def start(self) -> int:
        return self[1]

    @property
    def end(self) -> int:
        return self[2]

    def __repr__(self) -> str:
        return f"Word(value={self[0]!r}, start={self[1]!r}, end={self[2]!r})"


def shell_words(text: str) -> list[Word] | None:
    """Split one simple command into words; None when a quote or substitution is unterminated.

    Substitutions (`$(...)`, backticks) stay inside their word as written: their commands are
    parts of their own (see `shellsplit`), here they only must not split a word.
    """
    words = LazyWords(text)
    found = words.rest(0)
    return None if words.broken else found


class LazyWords:
    """Words scanned only as far as someone asks: unwrapping `timeout 5 echo <a megabyte>`
    needs three words, not two hundred thousand. `broken` turns true when the scan meets an
    unterminated quote; from then on the text is read as whitespace-separated `rough` words."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.broken = False
        self._words: list[Word] = []
        self._pos = 0

    def get(self, index: int) -> Word | None:
        while len(self._words) <= index and self._scan_next():
            pass
        return self._words[index] if index < len(self._words) else None

    def rest(self, start: int) -> list[Word]:
        while self._scan_next():
            pass
        return self._words[start:]

    def _scan_next(self) -> bool:
        text, pos = self.text, self._pos
        while pos < len(text) and text[pos] in _BLANK:
            pos += 1
        if pos >= len(text):
            self._pos = pos
            return False
        scanned = None if self.broken else _scan_word(text, pos)
        if scanned is None:
            self.broken = True
            end = pos
            while end < len(text) and text[end] not in _BLANK:
                end += 1
            scanned = (text[pos:end], end)
        self._words.append(Word(scanned[0], pos, scanned[1]))
        self._pos = scanned[1]
        return True


def rough_words(text: str) -> list[Word]:
    """Whitespace-separated words, for text whose quoting cannot be parsed (fail-closed reads)."""
    found = pack_regex(r"\S+").finditer(text)
    return [Word(match.group(), match.start(), match.end()) for match in found]


def normalise_command(command: str) -> str:
    """Collapse runs of whitespace so `git  push` and `git push` are judged alike."""
    return " ".join(command.split())


def is_assignment(word: str) -> bool:
    """`NAME=value` (also `NAME+=value`, `NAME[i]=value`): a setting, not the command."""
    return pack_regex(_ASSIGNMENT).match(word) is not None


def _scan_word(text: str, pos: int) -> tuple[str, int] | None:
    plain_run = pack_regex(_PLAIN_RUN)
    out: list[str] = []
    while pos < len(text) and text[pos] not in _BLANK:
        char = text[pos]
        if char == "\\":
            if pos + 1 >= len(text):
                return None  # a trailing backslash continues a line that never comes
            # A backslash-newline is a line continuation: both vanish.
            out.append("" if text[pos + 1] == "\n" else text[pos + 1])
            pos += 2
        elif char == "'":
            end = text.find("'", pos + 1)
            if end < 0:
                return None
            out.append(text[pos + 1 : end])
            pos = end + 1
        elif text.startswith("$'", pos):
            found = _ansi_c(text, pos + 2)
            if found is None:
                return None
            out.append(found[0])
            pos = found[1]
        elif char == '"':
            found = _double_quoted(text, pos + 1)
            if found is None:
                return None
            out.append(found[0])
            pos = found[1]
        elif text.startswith("$(", pos) or char == "`":
            end = _substitution_end(text, pos)
            if end is None:
                return None
            out.append(text[pos:end])
            pos = end
        else:
            run = plain_run.match(text, pos)
            end = run.end() if run else pos + 1
            out.append(text[pos:end])
            pos = end
    return "".join(out), min(pos, len(text))


def _double_quoted(text: str, pos: int) -> tuple[str, int] | None:
    out: list[str] = []
    while pos < len(text):
        char = text[pos]
        if char == '"':
            return "".join(out), pos + 1
        if char == "\\" and pos + 1 < len(text) and text[pos + 1] in _DOUBLE_QUOTE_ESCAPES:
            out.append("" if text[pos + 1] == "\n" else text[pos + 1])
            pos += 2
        elif text.startswith("$(", pos) or char == "`":
            end = _substitution_end(text, pos)
            if end is None:
                return None
            out.append(text[pos:end])
            pos = end
        else:
            out.append(char)
            pos += 1
    return None


def _ansi_c(text: str, pos: int) -> tuple[str, int] | None:
    out: list[str] = []
    while pos < len(text):
        char = text[pos]
        if char == "'":
            return "".join(out), pos + 1
        if char == "\\" and pos + 1 < len(text):
            following = text[pos + 1]
            out.append(_ANSI_C_ESCAPES.get(following, "\\" + following))
            pos += 2
        else:
            out.append(char)
            pos += 1
    return None


def _substitution_end(text: str, pos: int) -> int | None:
    """Just past a `$(...)` (nested parentheses and quotes inside) or a backtick pair."""
    if text[pos] == "`":
        index = pos + 1
        while index < len(text) and text[index] != "`":
            index += 2 if text[index] == "\\" else 1
        return index + 1 if index < len(text) else None
    depth, index, quote = 0, pos + 1, ""
    while index < len(text):
        char = text[index]
        if quote:
            if char == quote:
                quote = ""
            elif char == "\\" and quote == '"':
                index += 1
        elif char in "'\"":
            quote = char
        elif char == "\\":
            index += 1
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return None
