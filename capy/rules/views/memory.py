"""Typed view of the memory pack: what is learned from sessions, how sure it is, when it is said,
and which commands a learned anti-pattern may block."""

from __future__ import annotations

import re
from functools import cached_property

from capy.rules.views.base import PackView, RuleView, Section, active


class _RegexRule(RuleView):
    pattern: str

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern)


class ErrorRule(_RegexRule):
    category: str
    learn: bool


class Bypass(_RegexRule):
    pass


class Synonym(RuleView):
    terms: tuple[str, ...]


class Quoted(_RegexRule):
    span: str


class Phrasing(_RegexRule):
    intent: str
    polarity: str

    def what(self, sentence: str, quoted: tuple[tuple[int, int], ...] = ()) -> str | None:
        """What the sentence asks to be done or avoided, or None when the phrasing is absent or
        only starts inside one of the `quoted` spans (someone else's words, not the user's)."""
        for found in self.regex.finditer(sentence):
            groups = found.groupdict()
            name = next((key for key in ("what", "what2") if groups.get(key) is not None), None)
            start = found.start(name) if name else found.start()
            if any(begin <= start - 1 < end for begin, end in quoted):
                continue
            return (groups.get(name) if name else found.group()).strip()
        return None


class BlockClass(RuleView):
    mentions: str
    command: tuple[str, ...]
    word: str | None = None

    @cached_property
    def mentions_regex(self) -> re.Pattern[str]:
        return re.compile(self.mentions)

    @cached_property
    def matcher(self):
        from capy.rules.matchers import compile_rule

        return compile_rule({"kind": "argv", "command": self.command, "word": self.word}, {})


class Learning(Section):
    fix_window: int
    min_shared_words: int
    min_word_chars: int
    error_chars: int
    max_text_chars: int


class Signature(Section):
    volatile: tuple[str, ...]

    @cached_property
    def volatile_regexes(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(item) for item in self.volatile)


class Criteria(Section):
    actionable: str
    specific: str
    novel: str
    durable: str


class Gate(Section):
    threshold: int
    criteria: Criteria
    one_off: str
    typo_distance: int
    min_words: int

    @cached_property
    def one_off_regex(self) -> re.Pattern[str]:
        return re.compile(self.one_off)


class Initial(Section):
    error_fix: float
    correction: float
    preference: float
    manual: float
    principle: float


class Confidence(Section):
    initial: Initial
    repeat: float
    helpful: float
    harmful: float
    failing_fix: float
    established: float
    deprecated_below: float
    max: float


class Decay(Section):
    grace_days: float
    half_life_days: float
    floor: float


class Dedup(Section):
    lexical_similarity: float
    cosine_similarity: float


class Consolidation(Section):
    min_cluster: int
    similarity: float
    max_principles: int


class SessionStartBudget(Section):
    types: tuple[str, ...]
    max_records: int
    max_tokens: int
    min_confidence: float


class PromptBudget(Section):
    max_records: int
    max_tokens: int
    min_confidence: float
    relevance_floor: float
    min_shared_terms: int
    anchored: bool
    code_tokens: str | None = None
    task_overlap: float = 0.5
    mixed_shared_terms: int = 2
    common_share: float = 1.0
    said_common_share: float | None = None
    common_min_records: int = 0
    phrase_boost: float = 0.0
    graph_links: int = 0
    graph_weight: float = 0.0
    vector_floor: float = 1.0
    unanchored_weight: float = 1.0
    unknown_weight: float = 0.0
    standing_types: tuple[str, ...] = ()
    standing_shared_terms: int = 1
    standing_implied: bool = False


class Injection(Section):
    chars_per_token: int
    session_start: SessionStartBudget
    prompt: PromptBudget


class Feedback(Section):
    window: int
    reinforcement_events: int


class Blocking(Section):
    min_confidence: float
    override: str
    classes: tuple[BlockClass, ...] = ()

    @property
    def live_classes(self) -> tuple[BlockClass, ...]:
        return active(self.classes)


class Llm(Section):
    max_calls_per_session: int
    timeout_seconds: float
    max_seconds_per_session: float = 60.0
    max_error_chars: int = 1500


class MemoryPack(PackView):
    learning: Learning
    signature: Signature
    errors: tuple[ErrorRule, ...]
    bypasses: tuple[Bypass, ...] = ()
    quoted: tuple[Quoted, ...] = ()
    synonyms: tuple[Synonym, ...] = ()
    phrasings: tuple[Phrasing, ...]
    gate: Gate
    confidence: Confidence
    decay: Decay
    dedup: Dedup
    consolidation: Consolidation
    injection: Injection
    feedback: Feedback
    blocking: Blocking
    llm: Llm | None = None

    @property
    def live_errors(self) -> tuple[ErrorRule, ...]:
        return active(self.errors)

    @property
    def live_bypasses(self) -> tuple[Bypass, ...]:
        return active(self.bypasses)

    def quoted_spans(self, span: str) -> tuple[Quoted, ...]:
        return tuple(rule for rule in active(self.quoted) if rule.span == span)

    @property
    def live_synonyms(self) -> tuple[Synonym, ...]:
        return active(self.synonyms)

    @property
    def live_phrasings(self) -> tuple[Phrasing, ...]:
        return active(self.phrasings)


VIEW = MemoryPack
