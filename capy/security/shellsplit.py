"""Split a shell command line into the simple commands a shell would run.

`git status && rm -rf /` is two commands, and a permission rule that allows the first must not
let the second through. So every part is found the way a POSIX shell finds them: control
operators (`&&`, `||`, `;`, `;;`, `|`, `|&`, `&`, newline) end a command outside quotes,
comments and heredoc bodies; `$(...)`, backticks, `<(...)`, `>(...)` and `( ... )` subshells hold
commands of their own, which are split too (also inside double quotes and unquoted heredoc
bodies, where the shell still runs them). The outer command keeps the substitution's text, so
`echo $(date)` yields both `echo $(date)` and `date`.

The scanner never raises: an unterminated quote or substitution runs to the end of the input,
which keeps every word of the input inside some part (so a guard sees it) rather than losing it.
"""

from __future__ import annotations

from capy.packregex import pack_regex
from capy.security.shellwords import is_assignment

# No `re`, `shlex` or `dataclasses` at import: a hook splits commands here (memory's blocking)
# on a path that must cost little more than a bare start. The patterns are compiled through
# capy.packregex; shlex is imported by the functions that quote or re-split words.

# Shell grammar, not policy: reserved words that may open a command and are not the command.
_LEADING_KEYWORDS = frozenset(
    {"{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac"}
)
# `case WORD in PATTERN)` and, after `;;`, `PATTERN)` open a command without being part of it.
_CASE_HEAD = r"^case\s+\S+\s+in\s+"
_CASE_PATTERN = r"^\(?[^\s()]+\)\s*"
_KEYWORDS_ALONE = frozenset({"{", "}", "fi", "done", "esac", "(", ")"})
_PLAIN_RUN = r"[^\n\\'\"$`<>()&|;#]+"
# Nesting deeper than this is not a command a person wrote; past it, substitutions are read as
# plain text and the whole input is kept as one more part, so no allow rule can cover it.
_MAX_DEPTH = 64
_HEREDOC = r"<<(-?)[ \t]*((?:'[^'\n]*'|\"[^\"\n]*\"|\\?[^\s;&|<>()]+)+)"


class _Scan:
    """State of one scan: the text, where we are, and every finished part."""

    __slots__ = ("depth", "heredocs", "parts", "pos", "text", "too_deep")

    def __init__(self, text: str, depth: int = 0) -> None:
        self.text = text
        self.depth = depth
        self.pos = 0
        self.parts: list[str] = []
        self.too_deep = False
        self.heredocs: list[tuple[str, bool, bool]] = []


def split_command(command: str) -> list[str]:
    """Every simple command in `command` (inner ones before the command holding them), each with
    its whitespace collapsed and opening reserved words (`{`, `if`, `then` ...) removed."""
    scan = _split(command, 0)
    if scan.too_deep:
        scan.parts.append(command)
    return [part for part in (_tidy(part) for part in scan.parts) if part]


def _split(command: str, depth: int) -> _Scan:
    scan = _Scan(command, depth)
    _scan_list(scan, closer=None)
    return scan


def _deeper(scan: _Scan) -> bool:
    """Whether one more level of nesting is allowed (noting it when it is not)."""
    if scan.depth >= _MAX_DEPTH:
        scan.too_deep = True
        return False
    return True


def _scan_list(scan: _Scan, closer: str | None) -> str:
    """Scan commands until `closer` (or the end); return the raw text consumed, closer excluded."""
    start = scan.pos
    segment: list[str] = []
    text = scan.text
    while scan.pos < len(text):
        char = text[scan.pos]
        if closer is not None and char == closer:
            raw = text[start : scan.pos]
            scan.pos += 1
            _finish(scan, segment)
            return raw
        if _at_operator(scan, segment):
            continue
        if char == "#" and _word_start(segment):
            _skip_comment(scan)
            continue
        if char == "(" and _blank(segment) and _deeper(scan):
            scan.pos += 1
            scan.depth += 1
            inner = _scan_list(scan, ")")
            scan.depth -= 1
            segment[:] = [_Subshell(f"({inner})")]
            continue
        segment.append(_scan_word_piece(scan))
    _finish(scan, segment)
    return text[start:]


def _at_operator(scan: _Scan, segment: list[str]) -> bool:
    """Consume a control operator (ending the segment) if one starts here."""
    text, pos = scan.text, scan.pos
    char = text[pos]
    if char == "\n":
        scan.pos += 1
        _finish(scan, segment)
        _read_heredoc_bodies(scan)
        return True
    if char not in ";&|":
        return False
    previous = segment[-1][-1:] if segment else ""
    if char in "&|" and previous in ("<", ">"):
        return False  # 2>&1, >&2, <&0 and >| are redirections, not operators
    if char == "&" and text[pos + 1 : pos + 2] == ">":
        return False  # &> and &>> redirect both streams
    two = text[pos : pos + 2]
    scan.pos += 2 if two in ("&&", "||", ";;", "|&", ";&") else 1
    _finish(scan, segment)
    return True


def _word_start(segment: list[str]) -> bool:
    return not segment or segment[-1][-1:] in (" ", "\t")


def _blank(segment: list[str]) -> bool:
    # Pieces are appended one at a time, so looking from the end is cheap for real commands.
    return all(piece.isspace() for piece in reversed(segment))


def _skip_comment(scan: _Scan) -> None:
    end = scan.text.find("\n", scan.pos)
    scan.pos = len(scan.text) if end < 0 else end


def _scan_word_piece(scan: _Scan) -> str:
    """Consume one lexical piece (quoted string, substitution, escape or character)."""
    text, pos = scan.text, scan.pos
    char = text[pos]
    two = text[pos : pos + 2]
    if char == "\\":
        scan.pos = min(pos + 2, len(text))
        return text[pos : scan.pos]
    if char == "'":
        end = text.find("'", pos + 1)
        scan.pos = len(text) if end < 0 else end + 1
        return text[pos : scan.pos]
    if two == "$'":
        scan.pos = _ansi_c_end(text, pos + 2)
        return text[pos : scan.pos]
    if char == '"':
        return _scan_double_quoted(scan)
    if two in ("$(", "<(", ">(") and _deeper(scan):
        return _scan_substitution(scan, pos, 2)
    if char == "`" and _deeper(scan):
        return _scan_backticks(scan)
    if two == "<<" and text[pos : pos + 3] != "<<<":
        return _note_heredoc(scan)
    run = pack_regex(_PLAIN_RUN).match(text, pos)
    scan.pos = run.end() if run else pos + 1
    return text[pos : scan.pos]


def _ansi_c_end(text: str, pos: int) -> int:
    while pos < len(text):
        if text[pos] == "\\":
            pos += 2
            continue
        if text[pos] == "'":
            return pos + 1
        pos += 1
    return len(text)


def _scan_double_quoted(scan: _Scan) -> str:
    """A double-quoted string: substitutions inside still run, so their commands are parts."""
    text, start = scan.text, scan.pos
    scan.pos += 1
    while scan.pos < len(text):
        char = text[scan.pos]
        if char == "\\":
            scan.pos += 2
        elif char == '"':
            scan.pos += 1
            break
        elif text[scan.pos : scan.pos + 2] == "$(" and _deeper(scan):
            _scan_substitution(scan, scan.pos, 2)
        elif char == "`" and _deeper(scan):
            _scan_backticks(scan)
        else:
            scan.pos += 1
    scan.pos = min(scan.pos, len(text))
    return text[start : scan.pos]


def _scan_substitution(scan: _Scan, start: int, opener: int) -> str:
    """`$(...)`, `<(...)`, `>(...)`: the inner command list is split like any other."""
    text = scan.text
    if text[start : start + 3] == "$((":
        return _scan_arithmetic(scan, start)
    scan.pos = start + opener
    scan.depth += 1
    _scan_list(scan, ")")
    scan.depth -= 1
    return text[start : scan.pos]


def _scan_arithmetic(scan: _Scan, start: int) -> str:
    """`$(( ... ))` is arithmetic, but `$(...)` inside it still runs a command."""
    text = scan.text
    scan.pos = start + 3
    depth = 2
    while scan.pos < len(text) and depth:
        if (
            text[scan.pos : scan.pos + 2] == "$("
            and text[scan.pos : scan.pos + 3] != "$(("
            and _deeper(scan)
        ):
            _scan_substitution(scan, scan.pos, 2)
            continue
        depth += {"(": 1, ")": -1}.get(text[scan.pos], 0)
        scan.pos += 1
    return text[start : scan.pos]


def _scan_backticks(scan: _Scan) -> str:
    """Old-style substitution; the body (with `\\`` unescaped) is split recursively."""
    text, start = scan.text, scan.pos
    pos = start + 1
    while pos < len(text) and text[pos] != "`":
        pos += 2 if text[pos] == "\\" else 1
    end = min(pos, len(text))
    body = text[start + 1 : end].replace("\\`", "`").replace("\\\\", "\\")
    inner = _split(body, scan.depth + 1)
    scan.too_deep = scan.too_deep or inner.too_deep
    scan.parts.extend(inner.parts)
    scan.pos = min(end + 1, len(text))
    return text[start : scan.pos]


def _note_heredoc(scan: _Scan) -> str:
    """Remember a heredoc; its body starts after the next newline and is data, not commands."""
    match = pack_regex(_HEREDOC).match(scan.text, scan.pos)
    if match is None:
        scan.pos += 2
        return "<<"
    word = match.group(2)
    quoted = any(mark in word for mark in ("'", '"', "\\"))
    delimiter = word.replace("'", "").replace('"', "").replace("\\", "")
    scan.heredocs.append((delimiter, quoted, bool(match.group(1))))
    scan.pos = match.end()
    return match.group(0)


def _read_heredoc_bodies(scan: _Scan) -> None:
    """Skip pending heredoc bodies; an unquoted body's substitutions still run, so split them."""
    text = scan.text
    for delimiter, quoted, strip_tabs in scan.heredocs:
        body_start = scan.pos
        while scan.pos < len(text):
            end = text.find("\n", scan.pos)
            line_end = len(text) if end < 0 else end
            line = text[scan.pos : line_end]
            scan.pos = line_end + 1 if end >= 0 else len(text)
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                break
        if not quoted:
            _split_expansions(scan, text[body_start : scan.pos])
    scan.heredocs.clear()


def _split_expansions(scan: _Scan, body: str) -> None:
    inner = _Scan(body, scan.depth)
    while inner.pos < len(body):
        if body[inner.pos] == "\\":
            inner.pos += 2
        elif body[inner.pos : inner.pos + 2] == "$(" and _deeper(inner):
            _scan_substitution(inner, inner.pos, 2)
        elif body[inner.pos] == "`" and _deeper(inner):
            _scan_backticks(inner)
        else:
            inner.pos += 1
    scan.parts.extend(inner.parts)


class _Subshell(str):
    """The text of a `( ... )` group; its commands are already parts of their own."""


def _finish(scan: _Scan, segment: list[str]) -> None:
    # A command that is a subshell group (plus redirections) adds nothing to check beyond the
    # group's own commands, and keeping it would make an all-parts-allowed verdict impossible.
    grouped = bool(segment) and isinstance(segment[0], _Subshell)
    text = "" if grouped else "".join(segment).strip()
    segment.clear()
    if text:
        scan.parts.append(text)


def _tidy(part: str) -> str:
    """Drop reserved words that open a command (`{ rm -rf /` is `rm -rf /`) and collapse space."""
    part = pack_regex(_CASE_HEAD).sub("", part.strip())
    part = pack_regex(_CASE_PATTERN).sub("", part)
    words = part.split()
    while words and words[0] in _LEADING_KEYWORDS:
        words.pop(0)
    if not words or (len(words) == 1 and words[0] in _KEYWORDS_ALONE):
        return ""
    return " ".join(words)


def without_assignments(part: str) -> str:
    """The command with leading `NAME=value` assignments removed (`FOO=1 rm x` runs `rm x`)."""
    words = words_of(part)
    if words is None:
        return part
    index = 0
    while index < len(words) and is_assignment(words[index]):
        index += 1
    if index == 0:
        return part
    import shlex

    return shlex.join(words[index:]) if index < len(words) else ""


def words_of(part: str) -> list[str] | None:
    """The shell words of one simple command with quotes removed, or None if it cannot parse."""
    import shlex

    try:
        return shlex.split(part, comments=False, posix=True)
    except ValueError:
        return None


def dequoted(part: str) -> str | None:
    """`'rm' -rf "/"` as `rm -rf /`: how the words read once the shell removes quotes."""
    words = words_of(part)
    return " ".join(words) if words else None
