"""Lessons from one session, with no LLM: an error followed by a related success (a rule), and
the user's corrections and preferences (preferences and anti-patterns). Each candidate is scored
by the quality gate (capy.memory.gate) before the projection sees it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from capy.memory.gate import score_fix, score_sentence
from capy.memory.llm_gate import LlmGate
from capy.memory.model import Lesson
from capy.memory.signals import Action, Edit, Said, backticked, command_words, quoted_in
from capy.memory.words import WORD_PART, stems

if TYPE_CHECKING:
    from capy.llm.bounded import BoundedChat
    from capy.memory.signals import Session
    from capy.rules.views.memory import MemoryPack


class Rejected:
    """A candidate the gate turned down, kept for `capy memory log`."""

    def __init__(self, lesson: Lesson, reason: str):
        self.lesson = lesson
        self.reason = reason


def session_lessons(
    session: Session, pack: MemoryPack, chat: BoundedChat | None = None
) -> tuple[list[Lesson], list[Rejected], list[tuple[Lesson, str]]]:
    """The session's lessons that pass the gate, those it rejected, and the LLM fallbacks.

    With a chat model, each error's lesson and the session's corrections are first analysed
    by it (capy.memory.llm_analysis), then the model scores every lesson for the gate; each
    failed step leaves the no-LLM lesson or scores, and is a fallback."""
    candidates: list[tuple[Lesson, Action | None]] = []
    events = session.events
    for index, event in enumerate(events):
        if isinstance(event, Action) and event.failed:
            lesson = _error_fix(session.id, events, index, pack)
        elif isinstance(event, Said):
            lesson = _from_sentence(session.id, event, pack, _last_command(events, index, pack))
        else:
            continue
        if lesson is None:
            continue
        lesson.task = _task(events, index, lesson.capsules)
        candidates.append((lesson, event if isinstance(event, Action) else None))
    rejected = [Rejected(lesson, lesson.veto) for lesson, _ in candidates if lesson.veto]
    kept = [(lesson, error) for lesson, error in candidates if not lesson.veto]
    fallbacks = _analysed(kept, chat, pack) if chat is not None else []
    lessons: list[Lesson] = []
    gate = LlmGate(chat, pack) if chat is not None else None
    for lesson, _error in kept:
        if gate is not None:
            scores, why = gate.scores(lesson)
            if scores is not None:
                lesson.scores = scores  # the total below is recomputed from these four
            elif why:
                fallbacks.append((lesson, why))
        total = sum(lesson.scores.values())
        if total >= pack.gate.threshold:
            lessons.append(lesson)
        else:
            shown = ", ".join(f"{name} {value}" for name, value in lesson.scores.items())
            rejected.append(Rejected(lesson, f"gate {total}/{pack.gate.threshold} ({shown})"))
    return lessons, rejected, fallbacks


def _analysed(
    kept: list[tuple[Lesson, Action | None]], chat: BoundedChat, pack: MemoryPack
) -> list[tuple[Lesson, str]]:
    """The model's causal analysis of each error and of the session's corrections, in place;
    the lessons it left as they were, with why."""
    from capy.memory.llm_analysis import analyse_corrections, analyse_error

    fallbacks = []
    for lesson, error in kept:
        if error is not None and lesson.source == "error_fix":
            why = analyse_error(chat, lesson, error, lesson.steps, pack)
            if why:
                fallbacks.append((lesson, why))
    corrections = [lesson for lesson, _ in kept if lesson.source == "correction"]
    fallbacks.extend(analyse_corrections(chat, corrections, pack))
    return fallbacks


def _error_fix(session: str, events: list, index: int, pack: MemoryPack) -> Lesson | None:
    error: Action = events[index]
    if not error.learn:
        return None
    learning = pack.learning
    edits: list[str] = []
    ran: list[str] = []  # other commands that worked before the fix (`mix format`)
    bypassed: Lesson | None = None
    attempted = _bypass("", error.command, pack)
    for later in events[index + 1 : index + 1 + learning.fix_window]:
        if isinstance(later, Edit):
            edits.extend(later.files)
            continue
        if not isinstance(later, Action) or later.tool != error.tool:
            continue
        if not _related(error, later, pack):
            if not later.failed and later.command:
                ran.append(_quoted(later.command))
            continue
        if later.failed:
            if later.signature == error.signature:
                continue  # the same failure again: keep looking for what worked
            return bypassed  # another failure of the same action: the story is not a fix
        lesson = _fix_lesson(session, error, later, edits, ran, pack)
        if attempted is not None:
            lesson.veto = f"the failing command was itself a safety bypass ({attempted})"
            return lesson
        check = _bypass(error.command, later.command, pack)
        if check is None:
            return lesson
        # Silencing the check is no fix; a later related success without a bypass still is.
        if bypassed is None:
            lesson.veto = f"the fix only bypassed a safety check ({check})"
            bypassed = lesson
    return bypassed


def _related(error: Action, later: Action, pack: MemoryPack) -> bool:
    """The same action again: enough shared command words besides the program's own name (a
    `git status` after a failed `git commit` is no attempt at the commit)."""
    program = next(iter(WORD_PART.findall(" ".join(command_program(error.command)))), "").lower()
    shared = (later.words & error.words) - {program}
    return len(shared) >= pack.learning.min_shared_words


def _bypass(failed: str, fixed: str, pack: MemoryPack) -> str | None:
    """The pack's bypass the fix adds and the failing command did not have, if any."""
    for rule in pack.live_bypasses:
        if rule.regex.search(fixed) and not rule.regex.search(failed):
            return rule.id
    return None


# Every word `_fix_lesson`'s sentence adds around the commands, error and files it quotes: two
# rules share them by construction, so they never make two rules alike (consolidation).
RULE_TEMPLATE = "When fails with an error, running editing nothing and then running it again worked"


def _fix_lesson(
    session: str, error: Action, fix: Action, edits: list[str], ran: list[str], pack: MemoryPack
) -> Lesson:
    failing = _quoted(error.command)
    quoted = f'"{error.line}"' if error.line else "an error"
    if fix.command.strip() == error.command.strip():
        steps = []
        if ran:
            steps.append("running " + ", ".join(dict.fromkeys(ran)))
        steps.append("editing " + (", ".join(dict.fromkeys(edits)) or "nothing"))
        if ran and not edits:
            steps.pop()
        how = f"{' and '.join(steps)} and then running it again worked"
    else:
        how = f"{_quoted(fix.command)} worked"
    text = f"When {failing} fails with {quoted}, {how}."
    programs = [*command_program(error.command), *command_program(fix.command)]
    entities = [*programs, *edits, *error.files]
    lesson = Lesson(
        type="rule",
        text=text[: pack.learning.max_text_chars],
        key=f"{error.signature}|fix:{' '.join(sorted(fix.words - error.words)) or 'same'}",
        source="error_fix",
        session=session,
        capsules=[error.capsule, fix.capsule],
        at=fix.at,
        entities=list(dict.fromkeys(entities)),
        words=sorted(error.words | fix.words),
        signature=error.signature,
        fix=fix.command,
    )
    lesson.scores = score_fix(error, fix, [*edits, *ran], pack)
    lesson.steps = [
        *(f"edited {name}" for name in dict.fromkeys(edits)),
        *(f"ran {c}" for c in ran),
    ]
    return lesson


def _task(events: list, index: int, own: list[str]) -> str | None:
    """What the user asked for when the session went where the lesson was learned: the first
    prompt before it (not the lesson's own), so the record is found by the task it belongs to."""
    first = next((event for event in events[:index] if isinstance(event, Said)), None)
    if first is None or first.capsule in own:
        return None
    return " ".join(
        event.sentence
        for event in events[:index]
        if isinstance(event, Said) and event.capsule == first.capsule
    )


def _last_command(events: list, index: int, pack: MemoryPack) -> str | None:
    """The command the agent ran just before the user spoke: a correction is about it."""
    for earlier in reversed(events[max(index - pack.learning.fix_window, 0) : index]):
        if isinstance(earlier, Said):
            return None
        if isinstance(earlier, Action) and earlier.command:
            return earlier.command
    return None


def _from_sentence(
    session: str, said: Said, pack: MemoryPack, previous: str | None
) -> Lesson | None:
    sentence = said.sentence.strip()
    if sentence.endswith("?"):
        return None
    quoted = quoted_in(sentence, pack)
    for phrasing in pack.live_phrasings:
        what = phrasing.what(sentence, quoted)
        if what is None:
            continue
        block = _block_class(sentence, pack)
        spans = backticked(what)
        anti = phrasing.polarity == "avoid" and bool(spans or block)
        record_type = "anti_pattern" if anti else "preference"
        words = sorted(command_words(" ".join(spans) or what, pack.learning.min_word_chars))
        lesson = Lesson(
            type=record_type,
            text=sentence[: pack.learning.max_text_chars],
            key="words:" + " ".join(sorted(stems(sentence))),
            source=phrasing.intent,
            session=session,
            capsules=[said.capsule],
            at=said.at,
            entities=list(dict.fromkeys(backticked(sentence))),
            words=words,
            context=previous if phrasing.intent == "correction" else None,
            polarity=phrasing.polarity,
            block_class=block if anti else None,
        )
        lesson.scores = score_sentence(sentence, what, pack)
        return lesson
    return None


def _block_class(sentence: str, pack: MemoryPack) -> str | None:
    for block in pack.blocking.live_classes:
        if block.mentions_regex.search(sentence):
            return block.id
    return None


def command_program(command: str) -> list[str]:
    """The program a command runs (after any VAR=value assignments), as a list of at most one."""
    words = command.split()
    while words and "=" in words[0]:
        words.pop(0)
    return words[:1]


def _quoted(command: str) -> str:
    command = " ".join(command.split())
    return f"`{command[:160]}`"
