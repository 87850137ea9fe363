"""Causal analysis with a configured chat model: why an error happened and what fixed it, and
why the user corrected the agent in a session, each said as one lesson a later agent can act
on. The no-LLM lesson (capy.memory.learning) is the draft the model sees and the fallback: its
key, provenance, words and blocking class never change, so a record keeps its id whatever the
model says, and only its text (and a `cause`) come from the reply.

A reply is used only when it is the JSON asked for and keeps what the evidence names: an
error's lesson names the failing program; a correction's lesson keeps every command the user
quoted in backticks. Anything else (no answer, an HTTP error, prose, cut-off JSON, a lesson
that drops the command) leaves the draft as it was, and the caller logs why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from capy.memory.llm import json_object, one_line

if TYPE_CHECKING:
    from capy.llm.bounded import BoundedChat
    from capy.memory.model import Lesson
    from capy.memory.signals import Action
    from capy.rules.views.memory import MemoryPack

MAX_TOKENS = 300
CAUSE_CHARS = 300

_ERROR_SYSTEM = (
    "You find why a coding agent's command failed and what made it work, from the session "
    "record below, and say it as one lesson a later agent can act on. Use only what the record "
    "shows; keep commands, flags, file names and error codes exactly as written. Answer with "
    'one JSON object and nothing else: {"cause": "<why it failed, one sentence>", '
    '"lesson": "<When ... fails with ..., do ...>"}.'
)
_CORRECTION_SYSTEM = (
    "A user corrected a coding agent during a session. For each numbered correction below, say "
    "why the user objected and what the agent should do from now on, as one lesson. Keep every "
    "command, flag and name the user wrote exactly, backticks included. Answer with one JSON "
    'object and nothing else: {"lessons": [{"n": <number>, "cause": "<why>", '
    '"lesson": "<what to do>"}]}, one entry per correction.'
)


def error_messages(lesson: Lesson, error: Action, between: list[str], pack: MemoryPack) -> list:
    """The prompt about one error and its fix: the failing command, the error's telling line
    and output (bounded), what happened in between, what worked, and the draft lesson."""
    limit = pack.llm.max_error_chars if pack.llm else 1500
    output = error.output.strip()
    shown = error.line + ("\n" + output if output and output != error.line else "")
    steps = "\n".join(f"- {step}" for step in between) or "- nothing"
    user = (
        f"Failing command: `{error.command}`\n"
        f"Error output:\n{shown[:limit]}\n"
        f"Then:\n{steps}\n"
        f"What worked: `{lesson.fix or error.command}`\n"
        f"Draft lesson: {lesson.text}"
    )
    return [{"role": "system", "content": _ERROR_SYSTEM}, {"role": "user", "content": user}]


def analyse_error(
    chat: BoundedChat, lesson: Lesson, error: Action, between: list[str], pack: MemoryPack
) -> str | None:
    """Rewrite `lesson` from the model's analysis of its error; why not, when it was not."""
    messages = error_messages(lesson, error, between, pack)
    reply, why = chat.ask(lesson.session, messages, max_tokens=MAX_TOKENS)
    if reply is None:
        return why
    data = json_object(reply)
    if data is None:
        return "the model's analysis of the error was not the JSON asked for"
    text = one_line(data.get("lesson"), pack.learning.max_text_chars)
    cause = one_line(data.get("cause"), CAUSE_CHARS)
    if text is None or cause is None:
        return "the model's analysis of the error lacked a cause or a lesson"
    program = next(iter(error.command.split()), "")
    if program and program.lower() not in text.lower():
        return f"the model's lesson does not name the failing `{program}`"
    lesson.text, lesson.cause = text, cause
    return None


def correction_messages(corrections: list[Lesson]) -> list:
    """The prompt about a session's corrections: each with the command it followed, if any."""
    lines = []
    for number, lesson in enumerate(corrections, start=1):
        before = f"The agent had run `{lesson.context}`. " if lesson.context else ""
        lines.append(f'{number}. {before}The user said: "{lesson.text}"')
    user = "\n".join(lines)
    return [{"role": "system", "content": _CORRECTION_SYSTEM}, {"role": "user", "content": user}]


def analyse_corrections(
    chat: BoundedChat, corrections: list[Lesson], pack: MemoryPack
) -> list[tuple[Lesson, str]]:
    """Rewrite the session's correction lessons from one analysis of them all; the lessons
    left as the user said them, each with why."""
    if not corrections:
        return []
    from capy.memory.signals import backticked

    session = corrections[0].session
    reply, why = chat.ask(session, correction_messages(corrections), max_tokens=MAX_TOKENS)
    if reply is None:
        return [(lesson, why) for lesson in corrections] if why else []
    data = json_object(reply)
    items = data.get("lessons") if data is not None else None
    if not isinstance(items, list):
        reason = "the model's analysis of the corrections was not the JSON asked for"
        return [(lesson, reason) for lesson in corrections]
    answered: dict[int, dict] = {}
    for item in items:
        number = item.get("n") if isinstance(item, dict) else None
        if isinstance(number, int) and not isinstance(number, bool):
            answered.setdefault(number, item)
    left = []
    for number, lesson in enumerate(corrections, start=1):
        item = answered.get(number, {})
        text = one_line(item.get("lesson"), pack.learning.max_text_chars)
        cause = one_line(item.get("cause"), CAUSE_CHARS)
        if text is None or cause is None:
            left.append((lesson, f"the model's analysis had no lesson for correction {number}"))
            continue
        dropped = [span for span in backticked(lesson.text) if span not in text]
        if dropped:
            left.append((lesson, f"the model's lesson dropped the user's `{dropped[0]}`"))
            continue
        lesson.text, lesson.cause = text, cause
    return left
