"""Volume for the vault benchmark: many sessions made by varying the real ones, deterministically.

Each generated session is a window of lines from one real transcript, with a new session id
and the words of its message texts shuffled by a seeded generator, so the index holds real
vocabulary, tool shapes and sizes, yet no two sessions are duplicates for deduplication.
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path
from typing import Any

# Lines per generated session at most: keeps 1,000 sessions to tens of MB, near the median
# size of real sessions, on a two-core machine.
WINDOW_LINES = 60
# Keys whose string values are message text (perturbed); everything else is kept as is.
_TEXT_KEYS = frozenset({"text", "content"})
SEED = 20260101


def main_transcripts(folder: Path) -> list[Path]:
    """The sessions' own files (sidecars ride with them), sorted for determinism."""
    return sorted(path for path in folder.rglob("*.jsonl") if "subagents" not in path.parts)


def generate_sessions(sources: list[Path], target: Path, count: int) -> list[Path]:
    """Write `count` varied sessions under `target`; the same inputs give the same bytes."""
    rng = random.Random(SEED)
    bases = [path.read_text(encoding="utf-8").splitlines() for path in sources]
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for number in range(count):
        lines = bases[number % len(bases)]
        start = rng.randrange(max(len(lines) - WINDOW_LINES, 0) + 1)
        session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        varied = [_vary(line, session_id, rng) for line in lines[start : start + WINDOW_LINES]]
        path = target / f"{session_id}.jsonl"
        path.write_text("\n".join(varied) + "\n", encoding="utf-8")
        written.append(path)
    return written


def _vary(line: str, session_id: str, rng: random.Random) -> str:
    try:
        record = json.loads(line)
    except ValueError:
        return line  # a malformed line stays malformed: the parser's leniency is measured too
    return json.dumps(_walk(record, session_id, rng, key=""), ensure_ascii=False)


def _walk(value: Any, session_id: str, rng: random.Random, key: str) -> Any:
    if isinstance(value, dict):
        return {
            name: session_id if name == "sessionId" else _walk(item, session_id, rng, name)
            for name, item in value.items()
        }
    if isinstance(value, list):
        return [_walk(item, session_id, rng, key) for item in value]
    if isinstance(value, str) and key in _TEXT_KEYS:
        words = value.split(" ")
        rng.shuffle(words)
        return " ".join(words)
    return value


def sample_queries(paths: list[Path], count: int) -> list[str]:
    """Two-word queries taken from the generated texts (so most have hits), deterministically."""
    rng = random.Random(SEED + 1)
    words: list[str] = []
    for path in paths[:50]:
        for line in path.read_text(encoding="utf-8").splitlines():
            words.extend(word for word in line.split() if word.isalpha() and len(word) >= 5)
    if len(words) < 2:
        return []
    queries = []
    for _ in range(count):
        first = rng.randrange(len(words) - 1)
        queries.append(f"{words[first]} {words[first + 1]}")
    return queries
