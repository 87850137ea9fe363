"""Seeded, realistic text for the performance benchmark: markdown, JSON, plain text, logs, code.

Why not plain sentences from one small pool: repeating ~1,800 help-topic sentences over 100k
chunks put "value" in 78% of chunks, where in the vaswani abstracts the most common content word
is in 18% of documents; with such lists even bare FTS5 needs >100 ms a query, which says
nothing about a real store. So words are drawn the way real text has them:
- sentence skeletons come from Python's help topics (`pydoc_data`, standard library), keeping
  their most frequent words (function words: "the", "that", "with"...) and replacing the others;
- replacements follow a Zipf-Mandelbrot law over a 50k-word vocabulary (the help topics' own
  words at the head, pronounceable invented words in the tail), so a few words are common and
  most are rare, as Heaps' and Zipf's laws describe for real corpora;
- each document has a topic: a few dozen specific words it keeps coming back to, as a page about
  one subject does, so a query for them finds a handful of documents rather than all or none;
- code and logs come from several templates each, filled with the same vocabulary.
Measured with seed 1 over 20k chunks made the way `capy bench perf` grows its store (words of
three letters or more, structure words aside, share of chunks holding the word): "return" 41%
and "def" 31% (code is a fifth of the mix, one small chunk per function), the commonest prose
word "function" 24%, the 10th word 17%, the 100th 6.9%, the 1,000th 0.75%, the 10,000th 0.14%.
The old generator had "value" in 78% of chunks. `tests/bench/test_bench_textgen.py` keeps the
head of plain text below 35%. The same seed gives the same text.
"""

from __future__ import annotations

import bisect
import itertools
import json
import random
import re
import textwrap
from collections import Counter
from functools import cache

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[A-Za-z]{3,15}")
_TOKEN = re.compile(r"[A-Za-z]+")
# Level mix of a busy service log: errors are rare, which is what makes them worth finding.
_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
_LEVEL_WEIGHTS = (20, 70, 8, 2)
# Shape of the word distribution (see the module docstring).
_VOCABULARY_SIZE = 50_000
_ZIPF_EXPONENT = 1.05
_ZIPF_OFFSET = 40  # flattens the head: real text has no content word in most passages
# The help topics' most frequent short words ("the", "that", "with") stay as sentence structure;
# frequent long ones ("function", "value") are subject words and get replaced.
_STRUCTURE_WORDS = 100
_STRUCTURE_WORD_LENGTH = 4
_TOPIC_WORDS = 40
_TOPIC_SHARE = 0.3  # of replaced words, the share taken from the document's topic


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
    words = [_invented_word(rng) for _ in range(4000)]
    return tuple(" ".join(rng.choices(words, k=rng.randint(6, 20))) + "." for _ in range(6000))


def _invented_word(rng: random.Random) -> str:
    consonants, vowels = "bcdfghklmnprstvz", "aeiou"
    syllables = rng.randint(2, 4)
    return "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(syllables)) + (
        rng.choice(consonants) if rng.random() < 0.5 else ""
    )


@cache
def _language() -> tuple[frozenset[str], tuple[str, ...], tuple[float, ...]]:
    """(structure words, vocabulary by rank, cumulative Zipf-Mandelbrot weights)."""
    counts = Counter(w.lower() for s in _sentences() for w in _TOKEN.findall(s))
    by_frequency = [word for word, _ in counts.most_common()]
    head = by_frequency[:_STRUCTURE_WORDS]
    structure = frozenset(w for w in head if len(w) <= _STRUCTURE_WORD_LENGTH)
    vocabulary = [w for w in by_frequency if w not in structure and 3 <= len(w) <= 15]
    known = set(vocabulary) | structure
    rng = random.Random(11)
    while len(vocabulary) < _VOCABULARY_SIZE:
        word = _invented_word(rng)
        if word not in known:
            known.add(word)
            vocabulary.append(word)
    weights = (1 / (rank + _ZIPF_OFFSET) ** _ZIPF_EXPONENT for rank in range(len(vocabulary)))
    return structure, tuple(vocabulary), tuple(itertools.accumulate(weights))


class TextGenerator:
    def __init__(self, seed: int | str = 0) -> None:
        self.rng = random.Random(seed)
        self.sentences = _sentences()
        self.structure, self.vocabulary, self.cumulative = _language()
        self.topic: tuple[str, ...] = ()
        self.new_topic()
        self.emitted: list[str] = []  # a sample of what went into documents, for queries
        self.identifiers: list[str] = []

    # ---- words -------------------------------------------------------------------------------
    def new_topic(self) -> None:
        """Pick the specific words the next document keeps coming back to (not the commonest:
        a subject's own words are rarer than the words every page uses)."""
        low = len(self.vocabulary) // 100
        self.topic = tuple(
            self.vocabulary[self.rng.randrange(low, len(self.vocabulary) // 4)]
            for _ in range(_TOPIC_WORDS)
        )

    def word(self) -> str:
        if self.rng.random() < _TOPIC_SHARE:
            return self.rng.choice(self.topic)
        point = self.rng.random() * self.cumulative[-1]
        return self.vocabulary[bisect.bisect_right(self.cumulative, point)]

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

    def _replace(self, match: re.Match[str]) -> str:
        token = match.group(0)
        if token.lower() in self.structure or len(token) < 3:
            return token
        word = self.word()
        return word.capitalize() if token[0].isupper() else word

    def sentence(self) -> str:
        sentence = _TOKEN.sub(self._replace, self.rng.choice(self.sentences))
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
        self.new_topic()
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

    # ---- logs --------------------------------------------------------------------------------
    def _log(self, index: int) -> str:
        stamp = f"2025-06-{1 + index // 5000:02d}T{(index // 60) % 24:02d}:{index % 60:02d}:00Z"
        (level,) = self.rng.choices(_LEVELS, _LEVEL_WEIGHTS)
        message = self.rng.choice(self._log_messages)(self)
        line = f"{stamp} {level:<7} {self.topic[0]}.{self.word()}: {message}"
        if level == "ERROR" and self.rng.random() < 0.5:
            line += f'\nTraceback (most recent call last):\n  File "{self.word()}.py", line '
            line += f"{self.rng.randint(1, 900)}, in {self.identifier()}\n"
            line += f"{self.word().capitalize()}Error: {self.sentence()}"
        return line

    def _log_request(self) -> str:
        method = self.rng.choice(("GET", "POST", "PUT", "DELETE"))
        status = self.rng.choice((200, 200, 200, 201, 204, 304, 400, 404, 500, 503))
        path = f"/{self.word()}/{self.word()}/{self.rng.randint(1, 99999)}"
        return f"{method} {path} {status} {self.rng.randint(1, 4000)}ms"

    def _log_connection(self) -> str:
        host = f"{self.word()}-{self.rng.randint(1, 40)}.{self.word()}.internal"
        return f"connection to {host}:{self.rng.randint(1024, 65535)} {self.sentence().lower()}"

    def _log_progress(self) -> str:
        done = self.rng.randint(1, 100000)
        worker = self.rng.randint(1, 64)
        return f"worker {worker} processed {done} {self.word()} records in {done // 7 + 1} ms"

    def _log_retry(self) -> str:
        name, attempt = self.identifier(), self.rng.randint(1, 5)
        return f"retrying {name} (attempt {attempt}/5): {self.word()} {self.word()}"

    def _log_key(self) -> str:
        outcome = self.rng.choice(("hit", "miss", "evicted", "expired"))
        return f"cache {outcome} for key {self.identifier()}:{self.rng.getrandbits(24):06x}"

    def _log_sentence(self) -> str:
        return self.sentence()

    _log_messages = (
        _log_request,
        _log_connection,
        _log_progress,
        _log_retry,
        _log_key,
        _log_sentence,
        _log_sentence,
    )

    # ---- code --------------------------------------------------------------------------------
    def _code(self, index: int) -> str:
        templates = self._code_templates
        make = templates[0] if index == 0 else self.rng.choice(templates)
        return make(self)

    def _snake(self) -> str:
        return self.identifier().lower().replace("-", "_")

    def _code_function(self) -> str:
        name, arg, other = self._snake(), self.word(), self.word()
        return (
            f"def {name}({arg}, {other}=None):\n"
            f'    """{self.sentence()}"""\n'
            f"    {self.word()} = {arg}.{self.word()}({other})\n"
            f"    if {arg}.{self.word()} > {self.rng.randint(1, 1000)}:\n"
            f'        raise {self.word().capitalize()}Error("{self.sentence()[:60]}")\n'
            f"    # {self.sentence()[:90]}\n"
            f"    return {self.word()}({arg}, {other})\n"
        )

    def _code_class(self) -> str:
        name = "".join(self.word().capitalize() for _ in range(2))
        fields = "".join(
            f"    {self.word()}: {self.rng.choice(('int', 'str', 'float', 'bool'))}"
            f" = {self.rng.randint(0, 500)}\n"
            for _ in range(self.rng.randint(2, 5))
        )
        method, arg = self._snake(), self.word()
        return (
            f"@dataclass\nclass {name}:\n"
            f'    """{self.sentence()}"""\n\n{fields}\n'
            f"    def {method}(self, {arg}):\n"
            f"        return self.{self.word()}.{self.word()}({arg})\n"
        )

    def _code_constants(self) -> str:
        lines = (
            f"{self.word().upper()}_{self.word().upper()} = {self.rng.randint(1, 100000)}"
            for _ in range(self.rng.randint(3, 8))
        )
        imports = f"from {self.word()}.{self.word()} import {self._snake()}, {self._snake()}\n"
        return imports + "\n".join(lines) + f"\n# {self.sentence()}\n"

    def _code_test(self) -> str:
        name, value = self._snake(), self.word()
        return (
            f"def test_{name}():\n"
            f"    {value} = {self._snake()}({self.rng.randint(1, 99)!r}, {self.word()!r})\n"
            f"    assert {value}.{self.word()} == {self.word()!r}\n"
        )

    def _code_javascript(self) -> str:
        name = "".join([self.word(), self.word().capitalize()])
        arg = self.word()
        return (
            f"export async function {name}({arg}) {{\n"
            f"  // {self.sentence()[:90]}\n"
            f"  const {self.word()} = await {arg}.{self.word()}('{self.word()}');\n"
            f"  if (!{arg}.{self.word()}) throw new Error('{self.sentence()[:60]}');\n"
            f"  return {{ {self.word()}: {self.rng.randint(1, 999)} }};\n}}\n"
        )

    _code_templates = (_code_function, _code_class, _code_constants, _code_test, _code_javascript)

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
