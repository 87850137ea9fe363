"""Records as a projection of capsules: every session's lessons, the repeats that reinforce them,
the feedback and the user's own operations, replayed in order. The same capsules always give the
same records, so a rebuild is a replay from zero.

Confidence is recomputed from counts (sessions that taught the record, helpful and harmful
feedback, failures of a learned fix), never incremented in place, so replaying a session twice
changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from capy.memory.learning import Rejected, session_lessons
from capy.memory.model import Lesson, Record, record_id
from capy.memory.signals import Action, Operation, Said, sessions_of
from capy.memory.words import stems

if TYPE_CHECKING:
    from capy.capsules.model import Capsule, Scope
    from capy.llm.bounded import BoundedChat
    from capy.memory.vectors import Similarity
    from capy.rules.views.memory import MemoryPack


@dataclass
class Projection:
    records: dict[str, Record] = field(default_factory=dict)
    forgotten: set[str] = field(default_factory=set)
    log: list[tuple[float, str, str, str]] = field(
        default_factory=list
    )  # at, record, event, detail
    similar: Similarity | None = None  # cosine of two texts, when vectors are available


def project(
    capsules: list[Capsule],
    scope: Scope,
    pack: MemoryPack,
    chat: BoundedChat | None = None,
    similar: Similarity | None = None,
) -> Projection:
    """The records `capsules` (one scope's, in log order) teach under `pack` (with the chat
    model's analysis and gate when one is configured; cosine dedup when `similar` is given)."""
    projection = Projection(similar=similar)
    for session in sessions_of(capsules, pack):
        lessons, rejected, fallbacks = session_lessons(session, pack, chat)
        for item in rejected:
            projection.log.append((item.lesson.at, "", "rejected", _rejection(item)))
        for lesson, why in fallbacks:
            projection.log.append((lesson.at, "", "llm-fallback", why[:200]))
        _judge_fixes(projection, session.events, pack)
        for lesson in lessons:
            _absorb(projection, lesson, scope, pack)
        _feedback_in_session(projection, session.events, pack)
        for event in session.events:
            if isinstance(event, Operation):
                _operate(projection, event, scope, pack)
    from capy.memory.consolidation import consolidate

    consolidate(projection, pack)
    for record in projection.records.values():
        settle(record, pack)
    return projection


def _rejection(item: Rejected) -> str:
    return f"{item.lesson.type} not kept, {item.reason}: {item.lesson.text[:120]}"


def _absorb(projection: Projection, lesson: Lesson, scope: Scope, pack: MemoryPack) -> None:
    """A lesson becomes a record, or reinforces the one it repeats (same key, or words close
    enough to count as a duplicate), whose provenance grows."""
    existing = projection.records.get(record_id(lesson.type, lesson.key))
    if existing is None:
        existing = _duplicate_of(projection, lesson, pack)
    if existing is not None and existing.id not in projection.forgotten:
        _merge(existing, lesson)
        projection.log.append((lesson.at, existing.id, "reinforced", lesson.session))
        return
    new_id = record_id(lesson.type, lesson.key)
    if new_id in projection.forgotten:
        return
    projection.records[new_id] = Record(
        id=new_id,
        type=lesson.type,
        text=lesson.text,
        key=lesson.key,
        source=lesson.source,
        project=scope.project,
        tenant=scope.tenant,
        sessions=[lesson.session],
        provenance=list(lesson.capsules),
        entities=list(lesson.entities),
        words=list(lesson.words),
        signature=lesson.signature,
        fix=lesson.fix,
        context=lesson.context,
        polarity=lesson.polarity,
        task=lesson.task,
        cause=lesson.cause,
        block_class=lesson.block_class,
        created_ts=lesson.at,
        last_seen_ts=lesson.at,
    )
    projection.log.append((lesson.at, new_id, "learned", lesson.text[:120]))
    _supersede_contradicted(projection, projection.records[new_id], lesson.at)


def _supersede_contradicted(projection: Projection, newer: Record, at: float) -> None:
    """A newer lesson about the same subject (the same command in backticks) with the opposite
    polarity supersedes the older one; both are kept, linked."""
    if newer.polarity is None or not newer.entities:
        return
    subject = set(newer.entities)
    for older in list(projection.records.values()):
        if (
            older.id == newer.id
            or older.superseded_by
            or older.polarity in (None, newer.polarity)
            or not subject.intersection(older.entities)
        ):
            continue
        older.superseded_by, newer.supersedes = newer.id, older.id
        projection.log.append((at, older.id, "superseded", f"contradicted by {newer.id}"))


def _duplicate_of(projection: Projection, lesson: Lesson, pack: MemoryPack) -> Record | None:
    if lesson.signature is not None:
        return None  # error rules are one record per signature and fix: their key decides
    mine = stems(lesson.text)
    # Opposite polarities are a contradiction (superseded below), never one record.
    alike = [
        record
        for record in projection.records.values()
        if record.type == lesson.type
        and not record.superseded_by
        and (record.polarity == lesson.polarity or None in (record.polarity, lesson.polarity))
    ]
    for record in alike:
        if jaccard(mine, stems(record.text)) >= pack.dedup.lexical_similarity:
            return record
    if projection.similar is not None:
        for record in alike:
            if projection.similar(lesson.text, record.text) >= pack.dedup.cosine_similarity:
                return record
    return None


def jaccard(first: set[str], second: set[str]) -> float:
    union = first | second
    return len(first & second) / len(union) if union else 0.0


def _merge(record: Record, lesson: Lesson) -> None:
    if lesson.session not in record.sessions:
        record.sessions.append(lesson.session)
    record.provenance.extend(item for item in lesson.capsules if item not in record.provenance)
    record.entities.extend(item for item in lesson.entities if item not in record.entities)
    record.last_seen_ts = max(record.last_seen_ts, lesson.at)


def _judge_fixes(projection: Projection, events: list, pack: MemoryPack) -> None:
    """A learned fix whose error comes back in a later session and is not followed by a success
    is failing: the record is demoted."""
    window = pack.learning.fix_window
    for index, event in enumerate(events):
        if not (isinstance(event, Action) and event.failed):
            continue
        for record in projection.records.values():
            if record.signature != event.signature or event.capsule in record.provenance:
                continue
            later = events[index + 1 : index + 1 + window]
            if not any(
                isinstance(item, Action) and not item.failed and item.words & event.words
                for item in later
            ):
                record.failures += 1
                projection.log.append((event.at, record.id, "failing-fix", event.line[:120]))


def _feedback_in_session(projection: Projection, events: list, pack: MemoryPack) -> None:
    """After an injection, a later related success credits a record; its error recurring marks
    it harmful. Each injected record is judged once per injection."""
    window = pack.feedback.window
    for index, event in enumerate(events):
        if not (isinstance(event, Operation) and event.op.get("op") == "injected"):
            continue
        for shown in event.op.get("records") or ():
            record = projection.records.get(str(shown))
            if record is None:
                continue
            verdict = _verdict(record, events[index + 1 : index + 1 + window], pack)
            if verdict is not None:
                _count(record, verdict, event.capsule)
                projection.log.append((event.at, record.id, verdict, "after injection"))


def _verdict(record: Record, later: list, pack: MemoryPack) -> str | None:
    """Harmful when the user corrects against the record after it was said, or its error comes
    back; helpful when a related action succeeds. A correction outweighs an earlier success:
    the agent followed the record and the user said that was wrong."""
    if any(isinstance(item, Said) and _corrects(record, item.sentence, pack) for item in later):
        return "harmful"
    related = set(record.words)
    for item in later:
        if isinstance(item, Action):
            if item.failed and record.signature and item.signature == record.signature:
                return "harmful"
            if not item.failed and related and len(item.words & related) >= 2:
                return "helpful"
    return None


def _corrects(record: Record, sentence: str, pack: MemoryPack) -> bool:
    """The sentence is a correction (a pack phrasing of that intent, outside quotes) about the
    record: it names one of its entities or shares two of its command words."""
    from capy.memory.signals import command_words, quoted_in

    quoted = quoted_in(sentence, pack)
    phrasing = next(
        (item for item in pack.live_phrasings if item.what(sentence, quoted) is not None), None
    )
    if phrasing is None or phrasing.intent != "correction":
        return False
    lowered = sentence.lower()
    # A lone program name (git, pnpm) is too broad; a command, flag or path is the record's own.
    if any(entity.lower() in lowered for entity in record.entities if not entity.isalnum()):
        return True
    said = command_words(sentence, pack.learning.min_word_chars)
    return len(said & set(record.words)) >= 2


def _count(record: Record, verdict: str, capsule: str) -> None:
    if capsule in record.feedback:
        return
    record.feedback.append(capsule)
    if verdict == "helpful":
        record.helpful += 1
    else:
        record.harmful += 1


def _operate(projection: Projection, event: Operation, scope: Scope, pack: MemoryPack) -> None:
    from capy.memory.operations import apply_operation

    apply_operation(projection, event, scope, pack)


def settle(record: Record, pack: MemoryPack, now: float | None = None) -> None:
    """Confidence from the record's counts (and decay when `now` is given), then its status."""
    confidence = pack.confidence
    start = getattr(confidence.initial, record.source, confidence.initial.error_fix)
    value = (
        start
        + confidence.repeat * max(len(record.sessions) - 1, 0)
        + confidence.helpful * record.helpful
        - confidence.harmful * record.harmful
        - confidence.failing_fix * record.failures
    )
    value = min(max(value, 0.0), confidence.max)
    if now is not None:
        value = decayed(value, now - record.last_seen_ts, pack)
    record.confidence = round(value, 4)
    if record.superseded_by:
        record.status = "superseded"
    elif value < confidence.deprecated_below:
        record.status = "deprecated"
    elif value >= confidence.established:
        record.status = "established"
    else:
        record.status = "candidate"


def decayed(value: float, idle_seconds: float, pack: MemoryPack) -> float:
    decay = pack.decay
    idle_days = idle_seconds / 86400 - decay.grace_days
    if idle_days <= 0 or value <= decay.floor:
        return value
    return max(decay.floor, value * 0.5 ** (idle_days / decay.half_life_days))
