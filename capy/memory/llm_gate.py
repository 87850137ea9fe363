"""The quality gate with a configured chat model: it scores a candidate lesson 0-4 on each
criterion, and capy recomputes the total from those four numbers (a `total` in the reply, or a
score out of range, is not trusted). Calls are bounded per session (pack `llm`), replies are
cached by prompt hash (so a rebuild replays them without calling), and any failure (no answer,
an HTTP error, a reply that is not the JSON asked for) falls back to the no-LLM scores, logged.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from capy.memory.gate import CRITERIA

if TYPE_CHECKING:
    from capy.llm import ChatModel
    from capy.memory.model import Lesson
    from capy.rules.views.memory import MemoryPack

MAX_TOKENS = 120
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


@dataclass
class LlmGate:
    model: ChatModel | None  # None: replay cached replies only (a rebuild without a model)
    conn: Any
    pack: MemoryPack
    calls: Counter[str] = field(default_factory=Counter)

    def scores(self, lesson: Lesson) -> tuple[dict[str, int] | None, str | None]:
        """The model's scores for `lesson`, or None and why the no-LLM scores stand."""
        from capy.capsules.sqlite.summaries import cached_reply, keep_reply

        messages = self.messages(lesson)
        key = _prompt_key(self.model, messages)
        reply = cached_reply(self.conn, key) if key else None
        if reply is None:
            if self.model is None:
                return None, None
            budget = self.pack.llm.max_calls_per_session if self.pack.llm else 0
            if self.calls[lesson.session] >= budget:
                return None, f"the session's {budget} LLM calls are spent"
            self.calls[lesson.session] += 1
            from capy.llm import LlmError

            try:
                reply = self.model.complete(messages, max_tokens=MAX_TOKENS)
            except LlmError as error:
                return None, str(error)
            keep_reply(self.conn, key, self.model.model, reply)
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
    fenced = _FENCE.match(reply)
    text = fenced.group(1) if fenced else reply.strip()
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    scores = {}
    for name in CRITERIA:
        value = data.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 4:
            return None
        scores[name] = value
    return scores


def _prompt_key(model: ChatModel | None, messages: list[dict[str, str]]) -> str | None:
    return model.prompt_hash(messages, max_tokens=MAX_TOKENS) if model is not None else None


def gate_for(store: Any, pack: MemoryPack) -> LlmGate | None:
    """The LLM gate when a chat model is configured, else None (the no-LLM path alone)."""
    from capy.config import load_settings
    from capy.llm import chat_model_from_settings

    model = chat_model_from_settings(load_settings(store.location.project_root).settings)
    if model is None:
        return None
    if pack.llm is not None:
        model = replace(model, timeout=min(model.timeout, pack.llm.timeout_seconds))
    return LlmGate(model, store.conn, pack)
