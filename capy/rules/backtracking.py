"""Spotting regexes that can backtrack catastrophically, before they run on a user's text.

Python's `re` backtracks: `(a+)+$` on "aaaa…!" takes time exponential in the length. The packs
need `re` (lookarounds and backreferences, which linear-time engines lack), so a pack's regex is
checked instead, in two ways:

- `risky_shape`: a static check on the parsed pattern for the two shapes behind nearly every
  such regex: a quantifier inside a quantifier, where both repeat without bound and the inner
  can start where the outer continues (`(a+)+`, `(\\w+\\s?)*`), and an alternation under a
  quantifier whose branches can start with the same character (`(a|ab)*`, `(\\w|\\d)+`).
- `adversarial_inputs`: strings built from the pattern's own characters, for a timed trial
  (`capy.rules.regextrial`) that `capy rules validate` runs in a child process with a deadline.
"""

from __future__ import annotations

import itertools
import re
from functools import lru_cache
from re import _parser

# A repeat counts as unbounded from this many repetitions on: `{1,2000}` nested in another
# such repeat multiplies out like `+` in `+`, `{1,4}` does not.
BIG_REPEAT = 16
# The characters first-sets are computed over: ASCII and Latin, where pack regexes live.
_PROBE = [chr(code) for code in range(0x250)]
_ALL = frozenset(_PROBE)
_REPEATS = (_parser.MAX_REPEAT, _parser.MIN_REPEAT)  # the ones that give characters back
_ANY_REPEAT = (*_REPEATS, _parser.POSSESSIVE_REPEAT)
_CATEGORY_TESTS = {
    _parser.CATEGORY_DIGIT: str.isdigit,
    _parser.CATEGORY_NOT_DIGIT: lambda char: not char.isdigit(),
    _parser.CATEGORY_SPACE: str.isspace,
    _parser.CATEGORY_NOT_SPACE: lambda char: not char.isspace(),
    _parser.CATEGORY_WORD: lambda char: char.isalnum() or char == "_",
    _parser.CATEGORY_NOT_WORD: lambda char: not (char.isalnum() or char == "_"),
}
# Computed once: a class like `[\w.-]` is met in hundreds of pack patterns.
_CATEGORY_CHARS = {
    category: frozenset(filter(test, _PROBE)) for category, test in _CATEGORY_TESTS.items()
}


@lru_cache(maxsize=4096)  # pure in the pattern, and every rule-set build lints the same ones
def risky_shape(pattern: str) -> str | None:
    """What makes `pattern` able to backtrack catastrophically, or None when nothing does."""
    try:
        tree = _parser.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return None  # not compiling is reported on its own
    return _walk(list(tree))


def _walk(items: list) -> str | None:
    for op, argument in items:
        if op in _REPEATS:
            _low, high, body = argument
            body_items = list(body)
            if _is_big(high):
                if _ambiguous(body_items, _first(body_items)):
                    return (
                        "a repeated group whose parts can split the same text in many ways "
                        "(the shape of `(a+)+` or `(a|aa)+`)"
                    )
                if _overlapping_branches(body_items):
                    return (
                        "a repeated alternation whose branches can start with the same "
                        "character (the shape of `(a|ab|b)+`)"
                    )
            found = _walk(body_items)
        elif op is _parser.POSSESSIVE_REPEAT or op is _parser.ATOMIC_GROUP:
            continue  # no backtracking into these
        else:
            found = next(
                (problem for child in _children(op, argument) if (problem := _walk(child))), None
            )
        if found:
            return found
    return None


def _is_big(high: int) -> bool:
    return high == _parser.MAXREPEAT or high >= BIG_REPEAT


def _children(op, argument) -> list[list]:
    if op is _parser.SUBPATTERN:
        return [list(argument[3])]
    if op is _parser.ATOMIC_GROUP:
        return [list(argument)]
    if op is _parser.BRANCH:
        return [list(branch) for branch in argument[1]]
    if op in (_parser.ASSERT, _parser.ASSERT_NOT):
        return [list(argument[1])]
    if op is _parser.GROUPREF_EXISTS:
        return [list(part) for part in argument[1:] if part is not None]
    return []


def _ambiguous(sequence: list, after: set[str]) -> bool:
    """True when a part of `sequence` (an outer repeat's body) that can stop early can hand
    characters to the next iteration (which starts with `after`) with nothing required in
    between: a run then splits between iterations in exponentially many ways, and a failing
    match tries them all. (Overlaps inside one iteration cost polynomial time, not this.)"""
    for index, (op, argument) in enumerate(sequence):
        chars = _chars([(op, argument)])
        if _delimited(sequence[index + 1 :], chars, after):
            continue
        if _variable(op, argument) and chars & after:
            return True
        if op is _parser.ATOMIC_GROUP:
            continue  # matched once, never re-split
        if any(_ambiguous(child, after) for child in _children(op, argument)):
            return True
    return False


def _delimited(rest: list, chars: set[str], after: set[str]) -> bool:
    r"""True when `rest` holds a part every match must pass that either `chars` or the next
    iteration (`after`) cannot consume: a delimiter such as the `,` in `(\d+,)+`, which fixes
    where one iteration ends. In `(([a-z])+.)+` the `.` delimits nothing: it takes letters."""
    for item in rest:
        if not _required([item]):
            continue
        consumed = _first([item]) | _chars([item])
        if not (consumed & chars) or not (consumed & after):
            return True
    return False


def _variable(op, argument) -> bool:
    """A repeat of varying count, or an alternation with an empty branch (`(?:|b)`, which the
    parser makes of `(a|ab)`): both can stop early and leave characters to what follows."""
    if op in _REPEATS:
        return argument[1] > argument[0]
    if op is _parser.BRANCH:
        return not all(_required(list(branch)) for branch in argument[1])
    return False


def _chars(items: list) -> set[str]:
    """Every probe character `items` can consume, anywhere in a match."""
    found: set[str] = set()
    for op, argument in items:
        if op in (_parser.LITERAL, _parser.NOT_LITERAL, _parser.ANY, _parser.IN):
            found |= _first([(op, argument)])
        elif op in _ANY_REPEAT:
            found |= _chars(list(argument[2]))
        elif op is _parser.BRANCH:
            for branch in argument[1]:
                found |= _chars(list(branch))
        elif op not in (_parser.ASSERT, _parser.ASSERT_NOT):
            for child in _children(op, argument):
                found |= _chars(child)
    return found


def _overlapping_branches(body: list) -> bool:
    for op, argument in body:
        if op is _parser.BRANCH:
            seen: set[str] = set()
            for branch in argument[1]:
                first = _first(list(branch), anchors=False)
                if first & seen:
                    return True
                seen |= first
        elif op is _parser.SUBPATTERN and _overlapping_branches(list(argument[3])):
            return True
    return False


# `$` and `\Z`: what comes next can only be a line end (or nothing), so for what follows they
# act like a required newline.
_END_ANCHORS = (_parser.AT_END, _parser.AT_END_LINE, _parser.AT_END_STRING)


def _required(items: list) -> bool:
    """True when `items` must consume at least one character (or end the line there)."""
    for op, argument in items:
        if op in (_parser.LITERAL, _parser.NOT_LITERAL, _parser.IN, _parser.ANY):
            return True
        if op is _parser.AT and argument in _END_ANCHORS:
            return True
        if op in _ANY_REPEAT and argument[0] > 0 and _required(list(argument[2])):
            return True
        if op is _parser.SUBPATTERN and _required(list(argument[3])):
            return True
        if op is _parser.ATOMIC_GROUP and _required(list(argument)):
            return True
        if op is _parser.BRANCH and all(_required(list(branch)) for branch in argument[1]):
            return True
    return False


def _first(items: list, *, anchors: bool = True) -> set[str]:
    """The probe characters a match of `items` can start with; with `anchors`, an end anchor
    counts as the newline it stands before."""
    found: set[str] = set()
    for op, argument in items:
        if op is _parser.LITERAL:
            return found | {chr(argument)}
        if op is _parser.NOT_LITERAL:
            return found | (_ALL - {chr(argument)})
        if op is _parser.ANY:
            return found | set(_ALL)
        if op is _parser.IN:
            return found | _class_chars(argument)
        if op is _parser.AT and argument in _END_ANCHORS:
            return found | {"\n"} if anchors else found
        if op is _parser.ATOMIC_GROUP:
            found |= _first(list(argument), anchors=anchors)
            if _required(list(argument)):
                return found
        elif op is _parser.SUBPATTERN:
            found |= _first(list(argument[3]), anchors=anchors)
            if _required(list(argument[3])):
                return found
        elif op is _parser.BRANCH:
            for branch in argument[1]:
                found |= _first(list(branch), anchors=anchors)
            if all(_required(list(branch)) for branch in argument[1]):
                return found
        elif op in _ANY_REPEAT:
            found |= _first(list(argument[2]), anchors=anchors)
            if argument[0] > 0 and _required(list(argument[2])):
                return found
        # Anchors, lookarounds and group references consume nothing here: look further.
    return found


def _class_chars(items) -> set[str]:
    negate = False
    chars: set[str] = set()
    for op, argument in items:
        if op is _parser.NEGATE:
            negate = True
        elif op is _parser.LITERAL:
            chars.add(chr(argument))
        elif op is _parser.RANGE:
            low, high = argument
            chars.update(map(chr, range(low, min(high, len(_PROBE) - 1) + 1)))
        elif op is _parser.CATEGORY and argument in _CATEGORY_CHARS:
            chars |= _CATEGORY_CHARS[argument]
    return set(_ALL - chars) if negate else chars


def adversarial_inputs(pattern: str, length: int) -> list[str]:
    """Strings that make a backtracking regex work hardest: long runs of the characters the
    pattern can match, ending in one it cannot continue with."""
    try:
        tree = _parser.parse(pattern)
    except (re.error, RecursionError, OverflowError):
        return []
    alphabet = sorted(_first(list(tree)) | _literals(list(tree)))[:24] or ["a"]
    inputs = []
    for char in alphabet:
        inputs.append(char * length + "\x00")
    for first, second in itertools.pairwise(alphabet):
        inputs.append((first + second) * (length // 2) + "\x00")
        inputs.append((first + " ") * (length // 2) + "\x00")
    return inputs


def _literals(items: list) -> set[str]:
    found: set[str] = set()
    for op, argument in items:
        if op is _parser.LITERAL:
            found.add(chr(argument))
        elif op is _parser.IN:
            found |= set(sorted(_class_chars(argument))[:3])
        elif op in _ANY_REPEAT:
            found |= _literals(list(argument[2]))
        else:
            for child in _children(op, argument):
                found |= _literals(child)
    return found
