"""A long line shown as windows around its rarest matches, not one window around its first.

A report printed as one line (a JUnit XML file, minified HTML, a long log or JSON-lines entry
that is not records) holds its answers anywhere along the line: the two `<skipped>` elements
of a 17 KB JUnit report sit deep inside, while the first match of "tests" is at its start.
Here the line keeps the one window it had (around its first match), and its other matches are
ranked by their term's rarity (the reply's line weights, and among equals the term the line
holds fewer times): each chosen match gets a window of the executor pack's
`long_lines.window_bytes` (a third before it, the rest after), up to `long_lines.windows`
windows in all, shown in the line's order, `…` marking what is left out.
"""

from __future__ import annotations

from collections.abc import Sequence

GAP = "…"


def line_windows(
    text: str,
    matches: Sequence[tuple[int, int, float]],
    *,
    windows: int,
    window_bytes: int,
    first_bytes: int,
) -> str | None:
    """`text` cut to windows around `matches` ((start, end, weight) in characters, weight
    the term's), or None when one window holds every chosen match (the caller's own cut).
    The first window is the caller's own cut, `first_bytes` around the first match, so the
    windows only ever add to what one window showed."""
    if windows < 2 or not matches:
        return None
    # A term the line holds fewer times tells more about where in it the answer is.
    held: dict[float, int] = {}
    for _, _, weight in matches:
        held[weight] = held.get(weight, 0) + 1
    ordered = sorted(matches, key=lambda m: (-m[2], held[m[2]], m[0]))
    chosen = [_window(text, min(start for start, _, _ in matches), first_bytes)]
    for start, end, _ in ordered:
        if any(a <= start and end <= b for a, b in chosen):
            continue
        if len(chosen) == windows:
            break
        chosen.append(_window(text, start, window_bytes))
    if len(chosen) < 2:
        return None
    merged: list[tuple[int, int]] = []
    for a, b in sorted(chosen):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    if len(merged) < 2:
        return None
    pieces = [text[a:b] for a, b in merged]
    return (
        (GAP if merged[0][0] > 0 else "")
        + GAP.join(pieces)
        + (GAP if merged[-1][1] < len(text) else "")
    )


def _window(text: str, at: int, size: int) -> tuple[int, int]:
    """About `size` bytes of `text` around character `at`: a third before, the rest after."""
    start = max(0, at - size // 3)
    end = start
    used = 0
    while end < len(text) and used < size:
        used += len(text[end].encode("utf-8"))
        end += 1
    if end == len(text):  # at the line's end: take the room before instead
        while start > 0 and used < size:
            start -= 1
            used += len(text[start].encode("utf-8"))
    return start, end
