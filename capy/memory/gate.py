"""The quality gate without an LLM: actionable, specific, novel and durable, each 0-4, from the
rules in the memory pack. Novelty is judged by the projection (a near-duplicate merges into the
record it repeats instead of becoming a new one), so candidates score it 4 here."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from capy.retrieval.fuzzy import levenshtein

if TYPE_CHECKING:
    from capy.memory.signals import Action
    from capy.rules.views.memory import MemoryPack

CRITERIA = ("actionable", "specific", "novel", "durable")
# A token that names something exact: a flag, a path or file, a dotted name, code in backticks.
_SPECIFIC = re.compile(r"`[^`]+`|(?<!\w)--?[A-Za-z][\w-]*|\b[\w-]+\.[A-Za-z]{1,5}\b|\w/\w|%\w")


def score_fix(error: Action, fix: Action, edits: list[str], pack: MemoryPack) -> dict[str, int]:
    changed = fix.command.strip() != error.command.strip() or bool(edits)
    durable = 4
    if _typo(error.command, fix.command, pack.gate.typo_distance):
        durable = 0
    if pack.gate.one_off_regex.search(f"{error.command}\n{fix.command}"):
        durable = 0
    return {
        "actionable": 4 if changed else 0,
        "specific": 4 if error.category != "other" else 2,
        "novel": 4,
        "durable": durable,
    }


def score_sentence(sentence: str, what: str, pack: MemoryPack) -> dict[str, int]:
    words = sentence.split()
    if _SPECIFIC.search(sentence):
        specific = 4
    elif len(words) >= pack.gate.min_words + 2:
        specific = 3
    else:
        specific = 1
    durable = 0 if pack.gate.one_off_regex.search(sentence) else 4
    actionable = 4 if len(what.split()) >= 2 else 2
    if len(words) < pack.gate.min_words:
        actionable = 0
    return {"actionable": actionable, "specific": specific, "novel": 4, "durable": durable}


def _typo(failed: str, fixed: str, limit: int) -> bool:
    """The fix runs the same arguments under a program name a few letters away."""
    first, second = failed.split(), fixed.split()
    if not first or not second or first[0] == second[0] or first[1:] != second[1:]:
        return False
    return levenshtein(first[0], second[0], limit) <= limit
