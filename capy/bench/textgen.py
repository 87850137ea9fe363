"""Seeded, varied text for the performance benchmark: markdown, JSON, plain text, logs, code.

Sentences come from Python's own help topics (`pydoc_data`, part of the standard library:
about 460 KB of technical English), so term frequencies look like real documentation rather
than uniform noise; identifiers, numbers and hex ids are mixed in as tool output has them,
which grows the vocabulary the way real use does. The same seed gives the same text.
"""

from __future__ import annotations

import json
import random
import re
import string
import textwrap
from functools import cache

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[A-Za-z]{3,15}")
# Level mix of a busy service log: errors are rare, which is what makes them worth finding.
_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
_LEVEL_WEIGHTS = (20, 70, 8, 2)


@cache
def _sentences() -> tuple[str, ...]:
    try:
        from pydoc_data.topics import topics
    except ImportError:  # some distributions strip it: fall back to made-up words
        return _invented_sentences()
    pool = []
    for text in topics.values():
        for sentence in _SENTENCE_END.split(" ".join(text.split())):
            letters = sum(ch.isalpha() for ch in sentence)
            if 30 <= len(sentence) <= 240 and letters > 0.7 * len(sentence):
                pool.append(sentence)
    return tuple(sorted(set(pool))) or _invented_sentences()


def _invented_sentences() -> tuple[str, ...]:
    rng = random.Random(7)
    words = [
        "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 10))) for _ in range(4000)
    ]
    return tuple(" ".join(rng.choices(words, k=rng.randint(6, 20))) + "." for _ in range(6000))


class TextGenerator:
    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)
        self.sentences = _sentences()
        self.words = sorted({w.lower() for s in self.sentences for w in _WORD.findall(s)})
        self.emitted: list[str] = []  # a sample of what went into documents, for queries
        self.identifiers: list[str] = []

    # ---- pieces ------------------------------------------------------------------------------
    def word(self) -> str:
        return self.rng.choice(self.words)

    def identifier(self) -> str:
        a, b = self.word(), self.word()
        style = self.rng.randrange(4)
        name = (
            f"{a}_{b}",
            f"{a}{b.capitalize()}",
            f"{a}-{b}-{self.rng.randint(1, 999)}",
            f"{a.upper()}_{b.upper()}",
        )[style]
        if len(self.identifiers) < 5000:
            self.identifiers.append(name)
        return name

    def sentence(self) -> str:
        sentence = self.rng.choice(self.sentences)
        if len(self.emitted) < 20000 and self.rng.random() < 0.2:
            self.emitted.append(sentence)
        roll = self.rng.random()
        if roll < 0.15:
            sentence = f"{sentence} See {self.identifier()}."
        elif roll < 0.25:
            elapsed, ident = self.rng.randint(2, 99999), self.rng.getrandbits(32)
            sentence = f"{sentence} ({elapsed} ms, id {ident:08x})"
        return sentence

    def paragraph(self, low: int = 2, high: int = 6) -> str:
        return " ".join(self.sentence() for _ in range(self.rng.randint(low, high)))

    def title(self) -> str:
        return " ".join(self.word() for _ in range(self.rng.randint(2, 5))).capitalize()

    # ---- documents ---------------------------------------------------------------------------
    def document(self, content_type: str, target_bytes: int) -> str:
        make = getattr(self, f"_{content_type}")
        parts: list[str] = []
        size = 0
        while size < target_bytes:
            part = make(len(parts))
            parts.append(part)
            size += len(part.encode()) + 1
        if content_type == "json":
            return json.dumps({"items": [json.loads(p) for p in parts]}, indent=2)
        return "\n".join(parts)

    def _markdown(self, index: int) -> str:
        lines = [f"# {self.title()}\n" if index == 0 else f"## {self.title()}\n"]
        for _ in range(self.rng.randint(1, 3)):
            if self.rng.random() < 0.3:
                lines.append(f"### {self.title()}\n")
            lines.append(textwrap.fill(self.paragraph(), 100) + "\n")
            if self.rng.random() < 0.25:
                lines.extend(f"- {self.sentence()}" for _ in range(self.rng.randint(2, 5)))
                lines.append("")
            if self.rng.random() < 0.2:
                lines.append("```python\n" + self._code(0) + "```\n")
        return "\n".join(lines)

    def _json(self, index: int) -> str:
        record = {
            "id": 100000 + index,
            "name": self.identifier(),
            "status": self.rng.choice(("open", "closed", "failed", "running", "queued")),
            "owner": self.word(),
            "message": self.sentence(),
            "tags": [self.word() for _ in range(self.rng.randint(0, 4))],
            "created_at": f"2025-{self.rng.randint(1, 12):02d}-{self.rng.randint(1, 28):02d}",
            "metrics": {"latency_ms": self.rng.randint(1, 5000), "retries": self.rng.randint(0, 9)},
        }
        return json.dumps(record)

    def _plaintext(self, _index: int) -> str:
        return textwrap.fill(self.paragraph(3, 8), 72) + "\n"

    def _log(self, index: int) -> str:
        stamp = f"2025-06-{1 + index // 5000:02d}T{(index // 60) % 24:02d}:{index % 60:02d}:00Z"
        (level,) = self.rng.choices(_LEVELS, _LEVEL_WEIGHTS)
        line = f"{stamp} {level:<7} {self.word()}.{self.word()}: {self.sentence()}"
        if level == "ERROR" and self.rng.random() < 0.5:
            line += f'\nTraceback (most recent call last):\n  File "{self.word()}.py", line '
            line += f"{self.rng.randint(1, 900)}, in {self.identifier()}\n"
            line += f"{self.word().capitalize()}Error: {self.sentence()}"
        return line

    def _code(self, _index: int) -> str:
        name, arg, other = self.identifier().lower().replace("-", "_"), self.word(), self.word()
        return (
            f"def {name}({arg}, {other}=None):\n"
            f'    """{self.sentence()}"""\n'
            f"    value = {arg}.{self.word()}({other})\n"
            f"    if value > {self.rng.randint(1, 1000)}:\n"
            f'        raise ValueError("{self.sentence()[:60]}")\n'
            f"    # {self.sentence()[:90]}\n"
            f"    return {self.word()}(value, {other})\n"
        )

    # ---- queries -----------------------------------------------------------------------------
    def queries(self, count: int) -> list[tuple[str, str]]:
        """(shape, query) pairs mixing single terms, several terms, phrases, identifiers and
        typos, drawn from text that was actually emitted."""
        shapes = ("single", "terms", "phrase", "identifier", "typo")
        return [(shapes[i % 5], getattr(self, f"_q_{shapes[i % 5]}")()) for i in range(count)]

    def _pool(self) -> list[str] | tuple[str, ...]:
        return self.emitted or self.sentences

    def _emitted_words(self, min_length: int = 4) -> list[str]:
        for _ in range(50):
            words = [w.lower() for w in _WORD.findall(self.rng.choice(self._pool()))]
            words = [w for w in words if len(w) >= min_length]
            if len(words) >= 3:
                return words
        return [self.word() for _ in range(3)]

    def _q_single(self) -> str:
        return self.rng.choice(self._emitted_words(5))

    def _q_terms(self) -> str:
        words = self._emitted_words()
        return " ".join(self.rng.sample(words, min(len(words), self.rng.randint(2, 4))))

    def _q_phrase(self) -> str:
        words = _WORD.findall(self.rng.choice(self._pool()))
        start = self.rng.randrange(max(1, len(words) - 1))
        return '"' + " ".join(words[start : start + 2]).lower() + '"'

    def _q_identifier(self) -> str:
        return self.rng.choice(self.identifiers) if self.identifiers else self.word()

    def _q_typo(self) -> str:
        word = self.rng.choice(self._emitted_words(7))
        i = self.rng.randrange(1, len(word) - 2)
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]  # swap two neighbours
