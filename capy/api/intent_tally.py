"""The lines where an output sums its run up, for intents that ask how many or how it ended.

"Final tally of the run" or "how many errors does strict mode report" share no word with
`192 passed, 1 skipped in 26.83s` or `Found 208 errors in 1 file`, so search alone never
brings them. The chunking pack's `log.tally_rules` find such lines; an intent holding one of
the search pack's `intents.tally` words gets them first. A failure intent on an output that
flags nothing and says it ran clean (`clean` rules: `OK`, `ℹ fail 0`, a pytest line with no
failures) is answered by that line alone: the failure it asks about is not there. A run of
several parts says so once per part (doctest closes each file with its own counts), so one
part's clean line is that answer only when no summary line of the run reports a failure (the
pack's `log.tally_failure`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capy.api.intent_shape import intent_stems, stems_of

if TYPE_CHECKING:
    from capy.rules import RuleSet

CLEAN = "clean"


def is_tally_intent(intent: str, rules: RuleSet) -> bool:
    """Whether the intent asks how many or for an outcome (a word of the pack's tally list)."""
    wanted = stems_of(rules.view("search").intents.tally.words)
    return any(word in wanted for word in intent_stems(intent))


def tally_lines(stored: str, rules: RuleSet, *, says: str | None = None) -> list[str]:
    """The output's distinct summary lines (only those that say `says`, when given), in
    order, the last ones kept within the pack's `intents.tally.max_bytes`."""
    from capy.chunking.flagging import tally_lines as find

    found = find(stored, rules.view("chunking").log)
    if not found:
        return []
    lines = stored.splitlines()
    # A summary printed twice is shown once; a heading's breakdown stays whole.
    groups = dict.fromkeys(
        tuple(_with_block(lines, index))
        for index in sorted(found)
        if index < len(lines) and (says is None or says in found[index])
    )
    wanted = [line for group in groups for line in group]
    room = rules.view("search").intents.tally.max_bytes
    kept: list[str] = []
    for line in reversed(wanted):
        size = len(line.encode("utf-8")) + 1
        if size > room:
            break
        kept.append(line)
        room -= size
    return kept[::-1]


def clean_lines(stored: str, rules: RuleSet) -> list[str]:
    """The output's lines saying it ran clean, none when any of its summary lines reports a
    failure (`1 passed and 1 failed.` beside another file's `Test passed.`)."""
    from capy.chunking.flagging import tally_lines as find

    log = rules.view("chunking").log
    failed = log.tally_failure_regex
    if failed is not None:
        lines = stored.splitlines()
        if any(index < len(lines) and failed.search(lines[index]) for index in find(stored, log)):
            return []
    return tally_lines(stored, rules, says=CLEAN)


def _with_block(lines: list[str], index: int) -> list[str]:
    """The summary line, and when it is a heading (`Total issues (by severity):`) the lines
    indented under it, its breakdown (`Low: 28`)."""
    heading = lines[index]
    shown = [heading.strip()]
    if not heading.rstrip().endswith(":"):
        return shown
    depth = _indent(heading)
    for line in lines[index + 1 :]:
        if not line.strip() or _indent(line) <= depth:
            break
        shown.append(line.strip())
    return shown


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())


def tally_section(stored: str, intent: str, rules: RuleSet) -> list[str]:
    """The reply's summary section for a tally intent, empty for any other or when the
    output has no summary line."""
    if not is_tally_intent(intent, rules):
        return []
    lines = tally_lines(stored, rules)
    return ["", "### How the output sums itself up", *lines] if lines else []
