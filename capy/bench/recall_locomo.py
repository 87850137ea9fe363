"""LoCoMo for `capy bench recall`: each turn of the five conversations imported as a capsule
(its session's date and time, its speaker, a shared photo's caption), each question recalled
within the conversation's scope, scored against its labelled evidence turns.

The halves are the conversations `capy bench capsules-import` fixed before any tuning: dev
conv-26, conv-30, conv-41; held-back conv-42, conv-43. Categories are LoCoMo's own (1 multi-hop,
2 temporal, 3 open-domain, 4 single-hop, 5 adversarial).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from capy.bench.capsules_import import DEV, HELD_BACK, dated_turns

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
SCOPE_PREFIX = "locomo/"


@dataclass(frozen=True)
class LocomoTurn:
    conversation: str
    session: str
    dia_id: str
    speaker: str
    first_speaker: bool
    text: str
    created_at: str

    @property
    def content(self) -> str:
        """The turn as a transcript shows it: who spoke, what they said, what they shared."""
        return f"{self.speaker}: {self.text}"


@dataclass(frozen=True)
class LocomoQuestion:
    id: str
    conversation: str
    half: str
    category: str
    question: str
    evidence: tuple[str, ...]  # dia ids


def half_of(conversation: str) -> str | None:
    if conversation in DEV:
        return "dev"
    return "held" if conversation in HELD_BACK else None


def load_locomo(path: Path) -> tuple[list[LocomoTurn], list[LocomoQuestion]]:
    samples = json.loads(path.read_text(encoding="utf-8"))
    turns, questions = [], []
    for sample in samples:
        conversation = sample["sample_id"]
        talk = sample["conversation"]
        for session, turn, created_at in dated_turns(sample):
            text = turn["text"]
            if turn.get("blip_caption"):
                text += f" [shares {turn['blip_caption']}]"
            first = turn["speaker"] == talk["speaker_a"]
            turns.append(
                LocomoTurn(
                    conversation, session, turn["dia_id"], turn["speaker"], first, text, created_at
                )
            )
        half = half_of(conversation)
        for number, qa in enumerate(sample["qa"]):
            evidence = tuple(_dia_ids(qa.get("evidence") or ()))
            if half is None or not evidence:
                continue
            questions.append(
                LocomoQuestion(
                    f"{conversation}/q{number}",
                    conversation,
                    half,
                    CATEGORIES.get(int(qa["category"]), str(qa["category"])),
                    str(qa["question"]),
                    evidence,
                )
            )
    return turns, questions


def _dia_ids(evidence) -> list[str]:  # type: ignore[no-untyped-def]
    """Evidence ids as labelled; a few labels hold several ids in one string."""
    ids = []
    for item in evidence:
        ids += [part.strip() for part in str(item).replace(",", ";").split(";") if part.strip()]
    return ids
