"""The quality gate with a configured chat model: it scores a candidate lesson 0-4 on each
criterion, and capy recomputes the total from those four numbers (a `total` in the reply, or a
score out of range, is not trusted). Calls go through the session's bounded chat
(capy.memory.llm), so they are limited per session, cached by prompt hash (a rebuild replays
them without calling), and any failure falls back to the no-LLM scores, logged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from capy.memory.gate import CRITERIA
from capy.memory.llm import json_object

if TYPE_CHECKING:
    from capy.llm.bounded import BoundedChat
    from capy.memory.model import Lesson
    from capy.rules.views.memory import MemoryPack

MAX_TOKENS = 120


@dataclass
class LlmGate:
    chat: BoundedChat
    pack: MemoryPack

    def scores(self, lesson: Lesson) -> tuple[dict[str, int] | None, str | None]:
        """The model's scores for `lesson`, or None and why the no-LLM scores stand."""
        reply, why = self.chat.ask(lesson.session, self.messages(lesson), max_tokens=MAX_TOKENS)
        if reply is None:
            return None, why
        parsed = parse_scores(reply)
        if parsed is None:
            return None, "the model's reply was not the four scores asked for"
        return parsed, None

    def messages(self, lesson: Lesson) -> list[dict[str, str]]:
        criteria = self.pack.gate.criteria
        rubric = "\n".join(f"- {name}: {getattr(criteria, name)}" for name in CRITERIA)
        system = (
            "You judge lessons a coding agent's memory may keep. Score each criterion from 0 "
            "(not at all) to 4 (fully):\n"
            f"{rubric}\n"
            'Answer with one JSON object and nothing else: {"actionable": n, "specific": n, '
            '"novel": n, "durable": n}.'
        )
        user = f"Lesson ({lesson.type}, from {lesson.source.replace('_', ' ')}):\n{lesson.text}"
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def parse_scores(reply: str) -> dict[str, int] | None:
    """The four integer scores (0-4) from a reply, inside a code fence or not; None otherwise."""
    data = json_object(reply)
    if data is None:
        return None
    scores = {}
    for name in CRITERIA:
        value = data.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 4:
            return None
        scores[name] = value
    return scores
