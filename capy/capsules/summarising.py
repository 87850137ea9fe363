"""Hierarchical summaries of a scope's capsules (pure: no database, no network).

Level 1 covers `window` consecutive capsules of a session (or of the whole scope, for the
scope-wide summary, session ''); each higher level covers up to `fanout` summaries of the level
below, until one summary covers everything. Without a chat model a summary is extractive: the
window's best sentences, scored by how many of its frequent words they hold and weighted by
their capsule's kind, kept in their order. The same capsules always give the same summaries,
so a rebuild writes them byte for byte again.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from capy.rules.views.capsules import Summaries

SCOPE_WIDE = ""
EXTRACTIVE = "extractive"
SUMMARY = "summary"  # the kind of a piece that is a summary of the level below
_BULLET = re.compile(r"^- ([a-z][a-z ]*): (.+)$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*")


@dataclass(frozen=True)
class Piece:
    """One capsule (or one summary below) as a summary reads it."""

    first_seq: int
    last_seq: int
    kind: str
    text: str
    created_ts: float


@dataclass(frozen=True)
class SummaryRow:
    session_id: str
    level: int
    first_seq: int
    last_seq: int
    content: str
    method: str
    created_ts: float


# Writes one summary of some pieces: (content, method). The extractive writer, or one that
# asks a chat model and falls back to it.
Writer = Callable[[Sequence[Piece]], tuple[str, str]]


def plan(
    sessions: dict[str, list[Piece]], scope_pieces: list[Piece], settings: Summaries, write: Writer
) -> list[SummaryRow]:
    """Every summary the scope should have: per session with enough capsules, and scope-wide."""
    rows: list[SummaryRow] = []
    for session_id in sorted(sessions):
        pieces = sessions[session_id]
        if session_id and len(pieces) >= settings.session_min_capsules:
            rows.extend(hierarchy(session_id, pieces, settings, write))
    if len(scope_pieces) >= settings.scope_min_capsules:
        rows.extend(hierarchy(SCOPE_WIDE, scope_pieces, settings, write))
    return rows


def hierarchy(
    session_id: str, pieces: Sequence[Piece], settings: Summaries, write: Writer
) -> list[SummaryRow]:
    rows: list[SummaryRow] = []
    level, below, size = 1, list(pieces), settings.window
    while True:
        layer = [_row(session_id, level, group, write) for group in _groups(below, size)]
        rows.extend(layer)
        if len(layer) <= 1:
            return rows
        below = [Piece(r.first_seq, r.last_seq, SUMMARY, r.content, r.created_ts) for r in layer]
        level, size = level + 1, settings.fanout


def _groups(pieces: Sequence[Piece], size: int) -> list[Sequence[Piece]]:
    return [pieces[start : start + size] for start in range(0, len(pieces), size)]


def _row(session_id: str, level: int, group: Sequence[Piece], write: Writer) -> SummaryRow:
    content, method = write(group)
    return SummaryRow(
        session_id,
        level,
        group[0].first_seq,
        group[-1].last_seq,
        content,
        method,
        max(piece.created_ts for piece in group),
    )


def extractive(
    pieces: Sequence[Piece], settings: Summaries, stopwords: frozenset[str]
) -> tuple[str, str]:
    """The pieces' best sentences, in order, as markdown bullets within `max_chars`."""
    candidates: list[tuple[int, str, str, list[str]]] = []
    for piece in pieces:
        for kind, sentence in _sentences(piece):
            words = _words(sentence, settings.min_word_length, stopwords)
            if len(words) >= 2:
                candidates.append((len(candidates), kind, sentence, words))
    frequency = Counter(word for *_, words in candidates for word in set(words))
    scored = sorted(
        candidates,
        key=lambda c: (-_score(c[3], frequency, settings.kind_weights.get(c[1], 1.0)), c[0]),
    )
    chosen = sorted(scored[: settings.sentences])
    lines: list[str] = []
    used = 0
    for _, kind, sentence, _ in chosen:
        line = f"- {kind.replace('_', ' ')}: {sentence}"
        if used + len(line) + 1 > settings.max_chars:
            line = line[: max(settings.max_chars - used - 2, 0)].rstrip() + "…"
        lines.append(line)
        used += len(line) + 1
        if used >= settings.max_chars:
            break
    return "\n".join(lines) or "- (nothing to summarise)", EXTRACTIVE


def _sentences(piece: Piece) -> list[tuple[str, str]]:
    """(kind, sentence) pairs; a summary's bullets keep the kind of the capsule they came from."""
    if piece.kind == SUMMARY:
        found = (_BULLET.match(line) for line in piece.text.splitlines())
        return [(m.group(1).replace(" ", "_"), m.group(2)) for m in found if m]
    texts = (" ".join(part.split()) for part in _SENTENCE_END.split(piece.text))
    return [(piece.kind, text) for text in texts if text]


def _words(sentence: str, min_length: int, stopwords: frozenset[str]) -> list[str]:
    return [
        word
        for word in (match.group(0).lower() for match in _WORD.finditer(sentence))
        if len(word) >= min_length and word not in stopwords
    ]


def _score(words: list[str], frequency: Counter[str], weight: float) -> float:
    unique = set(words)
    return weight * sum(frequency[word] for word in unique) / math.sqrt(1 + len(words))
