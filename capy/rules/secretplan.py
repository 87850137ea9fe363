"""Where a secret detector's regex can match, read from its parse tree, to search less text.

A "factor" is a literal that every match of a regex consumes (`ghp_`, or one of `pass`, `token`,
`secret` ...). A match starts at most `before` characters ahead of a factor occurrence, and
either spans at most `width` characters or, for a regex that can never match a newline, stays on
one line. `SecretScanner` (capy/rules/secretscan.py) searches only around factor hits, and gets
exactly the matches a whole-text search gets. Everything here errs on the wide side: a plan that
cannot be proven gives None, and the regex scans the whole text.

Relies on `re._parser`, CPython's own regex parser (stable in shape since 3.11); anything it
does not recognise makes the plan None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MAX_WINDOW = 4096  # beyond this, windows save too little over a whole-text scan
_NEWLINE_CATEGORIES = frozenset(
    {"CATEGORY_SPACE", "CATEGORY_NOT_DIGIT", "CATEGORY_NOT_WORD", "CATEGORY_LINEBREAK"}
)


@dataclass(frozen=True)
class ScanPlan:
    factors: tuple[str, ...]  # lowercase; every match consumes one of them
    before: int  # most characters from a match's start to its factor
    width: int | None  # longest match; None: matches never span a newline (line windows)
    reach: int  # width mode: how far past a start an attempt reads; line mode: past the line


def plan_for(pattern: re.Pattern[str]) -> ScanPlan | None:
    """How to window a regex, or None when it must scan the whole text."""
    from re import _parser

    try:
        tree = _parser.parse(pattern.pattern, pattern.flags)
        required = _required(tree)
        if required is None:
            return None
        factors, before = tuple(sorted(required[0])), required[1]
        dotall = bool(pattern.flags & re.DOTALL)
        if not _can_match_newline(tree, dotall, into_assertions=False):
            ahead = _newline_lookahead_extent(tree, dotall)
            return None if ahead is None else ScanPlan(factors, before, None, ahead)
        width, ahead = tree.getwidth()[1], _lookahead_extent(tree)
    except (re.error, RecursionError, TypeError, ValueError, AttributeError):
        return None
    if width + ahead > MAX_WINDOW:
        return None
    return ScanPlan(factors, min(before, width), width, width + ahead + 2)


def _constants():
    from re import _constants

    return _constants


def _children(op: Any, av: Any, into_assertions: bool) -> list[Any]:
    c = _constants()
    if op is c.SUBPATTERN:
        return [av[3]]
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
        return [av[2]]
    if op is c.BRANCH:
        return list(av[1])
    if op is c.ATOMIC_GROUP:
        return [av]
    if op is c.GROUPREF_EXISTS:
        return [branch for branch in av[1:] if branch is not None]
    if op in (c.ASSERT, c.ASSERT_NOT) and into_assertions:
        return [av[1]]
    return []


def _walk(tree: Any, *, into_assertions: bool):
    for op, av in tree.data:
        yield op, av
        for child in _children(op, av, into_assertions):
            yield from _walk(child, into_assertions=into_assertions)


def _lookahead_extent(tree: Any) -> int:
    """How far past the current position any look-around in `tree` may read."""
    c = _constants()
    extent = 0
    for op, av in _walk(tree, into_assertions=False):
        if op in (c.ASSERT, c.ASSERT_NOT):
            extent = max(extent, av[1].getwidth()[1] + _lookahead_extent(av[1]))
    return extent


def _newline_lookahead_extent(tree: Any, dotall: bool) -> int | None:
    """How far past a newline the look-arounds of a line-bound regex may read; None: too far.

    A look-around that cannot match a newline reads at most the newline itself, plus what its
    own look-arounds read; one that can reads no further than its width.
    """
    c = _constants()
    extent = 0
    for op, av in _walk(tree, into_assertions=False):
        if op not in (c.ASSERT, c.ASSERT_NOT):
            continue
        if _can_match_newline(av[1], dotall, into_assertions=False):
            extent = max(extent, av[1].getwidth()[1] + _lookahead_extent(av[1]))
        else:
            inner = _newline_lookahead_extent(av[1], dotall)
            if inner is None:
                return None
            extent = max(extent, inner)
    return extent if extent <= MAX_WINDOW else None


def _can_match_newline(tree: Any, dotall: bool, *, into_assertions: bool) -> bool:
    c = _constants()
    structural = {c.AT, c.ASSERT, c.ASSERT_NOT, c.BRANCH, c.SUBPATTERN, c.MAX_REPEAT,
                  c.MIN_REPEAT, c.POSSESSIVE_REPEAT, c.ATOMIC_GROUP, c.GROUPREF_EXISTS}  # fmt: skip
    for op, av in _walk(tree, into_assertions=into_assertions):
        if op is c.SUBPATTERN and av[1] & re.DOTALL:
            dotall = True  # from here on, to stay on the safe side
        if (op is c.LITERAL and av == 10) or (op is c.NOT_LITERAL and av != 10):
            return True
        if (op is c.ANY and dotall) or (op is c.IN and _set_has_newline(av)):
            return True
        if op not in structural and op not in (c.LITERAL, c.NOT_LITERAL, c.ANY, c.IN):
            return True  # a back-reference or anything unforeseen: assume the worst
    return False


def _set_has_newline(items: list[tuple[Any, Any]]) -> bool:
    c = _constants()
    negate, found = False, False
    for op, av in items:
        if op is c.NEGATE:
            negate = True
        elif op is c.LITERAL:
            found |= av == 10
        elif op is c.RANGE:
            found |= av[0] <= 10 <= av[1]
        elif op is c.CATEGORY:
            found |= str(av) in _NEWLINE_CATEGORIES
        else:
            return True
    return found != negate


Required = tuple[frozenset[str], int]  # factors, and the most characters before them


def _required(tree: Any) -> Required | None:
    """Literals one of which every match of `tree` consumes, lowercased, and how far into the
    match they can start; None when no literal is certain."""
    from re import _parser

    c = _constants()
    best: Required | None = None
    offset = 0  # most characters the elements so far can consume
    run: list[str] = []
    run_start = 0

    def consider(found: Required | None) -> None:
        nonlocal best
        if found and (best is None or _score(found) > _score(best)):
            best = found

    for op, av in tree.data:
        if op is c.LITERAL and av < 128:
            run_start = offset if not run else run_start
            run.append(chr(av).lower())
            offset += 1
            continue
        consider((frozenset(["".join(run)]), run_start) if run else None)
        run = []
        consider(_shift(_required_in(op, av), offset))
        offset += _parser.SubPattern(tree.state, [(op, av)]).getwidth()[1]
    consider((frozenset(["".join(run)]), run_start) if run else None)
    return best


def _required_in(op: Any, av: Any) -> Required | None:
    c = _constants()
    if op is c.SUBPATTERN:
        return _required(av[3])
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT) and av[0] >= 1:
        return _required(av[2])  # the first repetition holds one
    if op is c.ATOMIC_GROUP:
        return _required(av)
    if op is c.BRANCH:
        options = [_required(branch) for branch in av[1]]
        if all(options):
            return frozenset().union(*(o[0] for o in options)), max(o[1] for o in options)
    return None


def _shift(found: Required | None, offset: int) -> Required | None:
    return None if found is None else (found[0], found[1] + offset)


def _score(found: Required) -> tuple[int, int, int]:
    """Longer factors hit less often; then fewer characters before them, fewer of them."""
    factors, before = found
    return min(len(factor) for factor in factors), -min(before, MAX_WINDOW), -len(factors)
