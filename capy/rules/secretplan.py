"""Where a secret detector's regex can match, read from its parse tree, to search less text.

A "factor" is a literal that a match consumes at a bounded distance from its start (`ghp_`, or
`token`, `pass` ...). A plan holds a `Cover`: the ways of choosing factors such that every match
consumes one of the chosen ones. A regex offers several (`api[_.-]?key` holds both `api` and `key`),
so the scanner counts the candidates in the text at hand and takes the cover with the fewest hits.
A match starts at most `before` characters ahead of its factor and either spans at most `width`
characters or, for a regex that can never match a newline, stays on one line. `SecretScanner`
(capy/rules/secretscan.py) searches only around factor hits, and gets exactly the matches a
whole-text search gets. Everything here errs on the wide side: a plan that cannot be proven gives
None, and the regex scans the whole text.

Relies on `re._parser`, CPython's own regex parser (stable in shape since 3.11); anything it
does not recognise makes the plan None.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import cache, cached_property

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_WINDOW = 4096  # beyond this, windows save too little over a whole-text scan
GOOD_ENOUGH = 16  # factor hits so few that counting more literals to find fewer costs more
_NEWLINE_CATEGORIES = frozenset(
    {"CATEGORY_SPACE", "CATEGORY_NOT_DIGIT", "CATEGORY_NOT_WORD", "CATEGORY_LINEBREAK"}
)


@dataclass(frozen=True)
class Factor:
    """Every match consumes `literal` (lowercase), starting at most `before` characters in.

    `lead` holds the character-class pieces (ranges, single characters and `\\d`-like
    categories) of everything a match can consume ahead of the factor, so a match starts within
    the run of such characters that ends at the factor; None when that could be any character.
    """

    literal: str
    before: int
    lead: frozenset[str] | None = None


@dataclass(frozen=True)
class AnyOf:
    """Every match meets each option, so any one of them is a cover."""

    options: tuple[Cover, ...]


@dataclass(frozen=True)
class AllOf:
    """Every match meets one of the parts (the branches of an alternation): all are needed."""

    parts: tuple[Cover, ...]


Cover = Factor | AnyOf | AllOf


@dataclass(frozen=True)
class ScanPlan:
    """How a detector's regex is run over a text: the windows it tries."""

    cover: Cover
    width: int | None  # longest match; None: matches never span a newline (line windows)
    reach: int  # width mode: how far past a start an attempt reads; line mode: past the line
    # The regex starts with a case-sensitive literal, which `re` itself skips to as fast as a
    # factor search does: windows only pay off when its factor hits are few.
    literal_led: bool = False

    @property
    def literals(self) -> frozenset[str]:
        """Every literal the cover may choose from."""
        return frozenset(factor.literal for factor in _factors_in(self.cover))

    def choose(
        self, hits: Callable[[str], int], free: Callable[[str], bool] = lambda literal: True
    ) -> tuple[int, tuple[Factor, ...]]:
        """The cover with the fewest factor hits in a text (`hits` counts one literal).

        Options with a literal that costs a pass over the text to count (`free` tells which do
        not) are only counted when the free options leave more than `GOOD_ENOUGH` hits.
        """
        return _cheapest(self._choices, hits, free)

    @cached_property
    def _choices(self) -> _Choice:
        # Built once per plan: `choose` runs for every detector on every text scanned (a log's
        # error rules on each log indexed), and rebuilding factors and option literals there
        # cost a third of a log's error scan.
        return _choices(self.cover, self.width)


def _factors_in(cover: Cover) -> Iterator[Factor]:
    if isinstance(cover, Factor):
        yield cover
    else:
        for child in cover.options if isinstance(cover, AnyOf) else cover.parts:
            yield from _factors_in(child)


# A cover made ready for `choose`: (_FACTOR, literal, its factor with `before` cut to the
# width), (_ALL, parts) or (_ANY, ((option, the option's literals), ...)).
_FACTOR, _ALL, _ANY = 0, 1, 2
_Choice = tuple


def _choices(cover: Cover, width: int | None) -> _Choice:
    if isinstance(cover, Factor):
        before = cover.before if width is None else min(cover.before, width)
        return (_FACTOR, cover.literal, (replace(cover, before=before),))
    if isinstance(cover, AllOf):
        return (_ALL, tuple(_choices(part, width) for part in cover.parts))
    options = cover.options
    return (
        _ANY,
        tuple(
            (_choices(option, width), tuple(f.literal for f in _factors_in(option)))
            for option in options
        ),
    )


def _cheapest(
    choice: _Choice, count: Callable[[str], int], free: Callable[[str], bool]
) -> tuple[int, tuple[Factor, ...]]:
    if choice[0] == _FACTOR:
        return count(choice[1]), choice[2]
    if choice[0] == _ALL:
        total, factors = 0, ()
        for part in choice[1]:
            hits, chosen = _cheapest(part, count, free)
            total, factors = total + hits, factors + chosen
        return total, factors
    # Free options first; ties (no hits at all, often) go to the statically best option.
    options = sorted(choice[1], key=lambda option: not all(map(free, option[1])))
    best = _cheapest(options[0][0], count, free)
    for option, literals in options[1:]:
        if best[0] <= GOOD_ENOUGH and not all(map(free, literals)):
            break  # the rest are costly too: sorted
        found = _cheapest(option, count, free)
        if (found[0], _static_rank(found[1])) < (best[0], _static_rank(best[1])):
            best = found
    return best


def _static_rank(factors: tuple[Factor, ...]) -> tuple[int, int, int]:
    shortest = min(len(factor.literal) for factor in factors)
    return -shortest, max(min(f.before, MAX_WINDOW) for f in factors), len(factors)


def plan_for(pattern: re.Pattern[str]) -> ScanPlan | None:
    """How to window a regex, or None when it must scan the whole text."""
    from re import _parser

    try:
        tree = _parser.parse(pattern.pattern, pattern.flags)
        cover = _cover(tree)
        if cover is None:
            return None
        dotall = bool(pattern.flags & re.DOTALL)
        if not _can_match_newline(tree, dotall, into_assertions=False):
            ahead = _newline_lookahead_extent(tree, dotall)
            led = _literal_led(tree, pattern.flags)
            return None if ahead is None else ScanPlan(cover, None, ahead, led)
        width, ahead = tree.getwidth()[1], _lookahead_extent(tree)
    except (re.error, RecursionError, TypeError, ValueError, AttributeError):
        return None
    if width + ahead > MAX_WINDOW:
        return None
    return ScanPlan(cover, width, width + ahead + 2, _literal_led(tree, pattern.flags))


def _literal_led(tree: Any, flags: int) -> bool:
    c = _constants()
    while tree.data and tree.data[0][0] is c.SUBPATTERN:
        _, add_flags, del_flags, tree = tree.data[0][1]
        flags = (flags | add_flags) & ~del_flags
    return bool(tree.data) and tree.data[0][0] is c.LITERAL and not flags & re.IGNORECASE


@cache
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


Lead = frozenset[str] | None  # class pieces a match may consume so far; None: any character


def _cover(tree: Any, lead: Lead = frozenset()) -> Cover | None:
    """The ways to cover every match of `tree` with factors; None when no literal is certain.

    Each element of a sequence is a cover on its own; so is a run of literals, and, where the
    run is followed by an alternation whose branches all start with literals, the run joined to
    each branch's start (`A(?:KIA|SIA)`, as `re` hoists a shared prefix, gives `akia`, `asia`).
    `lead` is what a match may consume before `tree` starts.
    """
    from re import _parser

    c = _constants()
    options: list[Cover] = []
    offset = 0  # most characters the elements so far can consume
    run: list[str] = []
    run_start, run_lead = 0, lead
    for op, av in tree.data:
        if op is c.LITERAL and av < 128:
            if not run:
                run_start, run_lead = offset, lead
            run.append(chr(av).lower())
            offset += 1
            lead = _union(lead, _chars(op, av))
            continue
        if run:
            options.append(Factor("".join(run), run_start, run_lead))
            options.extend(_joined("".join(run), run_start, run_lead, op, av))
            run = []
        inner = _cover_in(op, av, lead)
        if inner is not None:
            options.append(_shift(inner, offset))
        offset += _parser.SubPattern(tree.state, [(op, av)]).getwidth()[1]
        lead = _union(lead, _chars(op, av))
    if run:
        options.append(Factor("".join(run), run_start, run_lead))
    if not options:
        return None
    return options[0] if len(options) == 1 else AnyOf(tuple(options))


def _cover_in(op: Any, av: Any, lead: Lead) -> Cover | None:
    c = _constants()
    if op is c.SUBPATTERN:
        return _cover(av[3], lead)
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT) and av[0] >= 1:
        return _cover(av[2], lead)  # the first repetition holds one
    if op is c.ATOMIC_GROUP:
        return _cover(av, lead)
    if op is c.BRANCH:
        parts = [_cover(branch, lead) for branch in av[1]]
        if all(part is not None for part in parts):
            return parts[0] if len(parts) == 1 else AllOf(tuple(parts))
    return None


def _joined(run: str, run_start: int, lead: Lead, op: Any, av: Any) -> list[Cover]:
    c = _constants()
    if op is c.SUBPATTERN and len(av[3].data) == 1:
        op, av = av[3].data[0]
    if op is not c.BRANCH:
        return []
    leads = [_leading_literal(branch) for branch in av[1]]
    if not all(leads):
        return []
    return [AllOf(tuple(Factor(run + start, run_start, lead) for start in leads))]


def _leading_literal(tree: Any) -> str:
    c = _constants()
    lead = []
    for op, av in tree.data:
        if op is not c.LITERAL or av >= 128:
            break
        lead.append(chr(av).lower())
    return "".join(lead)


def _union(first: Lead, second: Lead) -> Lead:
    return None if first is None or second is None else first | second


_CATEGORY_CLASSES = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
}


def _chars(op: Any, av: Any) -> Lead:
    """The class pieces of every character an element can consume; None: any or unknown.

    Negated sets give None: a case-insensitive negated class matches less than a case-sensitive
    one, and the scanner reads these pieces case-insensitively to stay on the wide side.
    """
    c = _constants()
    if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
        return frozenset()  # looks, consumes nothing
    if op is c.LITERAL:
        return frozenset([_class_char(av)])
    if op is c.IN:
        return _set_pieces(av)
    children = _children(op, av, into_assertions=False)
    if op in (c.SUBPATTERN, c.BRANCH, c.ATOMIC_GROUP, c.MAX_REPEAT, c.MIN_REPEAT,
              c.POSSESSIVE_REPEAT):  # fmt: skip
        pieces: Lead = frozenset()
        for child in children:
            for child_op, child_av in child.data:
                pieces = _union(pieces, _chars(child_op, child_av))
        return pieces
    return None


def _set_pieces(items: list[tuple[Any, Any]]) -> Lead:
    c = _constants()
    pieces = set()
    for op, av in items:
        if op is c.LITERAL:
            pieces.add(_class_char(av))
        elif op is c.RANGE:
            pieces.add(f"{_class_char(av[0])}-{_class_char(av[1])}")
        elif op is c.CATEGORY and str(av) in _CATEGORY_CLASSES:
            pieces.add(_CATEGORY_CLASSES[str(av)])
        else:
            return None  # NEGATE, or a category with no class spelling
    return frozenset(pieces)


def _class_char(code: int) -> str:
    return f"\\U{code:08x}"  # any code point, spelled so no class syntax can misread it


def _shift(cover: Cover, offset: int) -> Cover:
    if isinstance(cover, Factor):
        return replace(cover, before=cover.before + offset)
    if isinstance(cover, AnyOf):
        return AnyOf(tuple(_shift(option, offset) for option in cover.options))
    return AllOf(tuple(_shift(part, offset) for part in cover.parts))
