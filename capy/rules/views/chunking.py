"""Typed view of the chunking pack: how content is recognised and cut into indexed chunks."""

from __future__ import annotations

import re
from enum import StrEnum
from functools import cached_property
from typing import Literal

from capy.clip import clip_line
from capy.rules.views.base import ConfigDict, Field, PackView, RuleView, Section, active


class ContentType(StrEnum):
    MARKDOWN = "markdown"
    JSON = "json"
    LOG = "log"
    CODE = "code"
    CSV = "csv"
    HTML = "html"
    DIFF = "diff"
    TRANSCRIPT = "transcript"
    PLAINTEXT = "plaintext"


class Severity(StrEnum):
    ERROR = "error"
    FAILURE = "failure"
    WARNING = "warning"


class TurnRole(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"


class _RegexRuleView(RuleView):
    pattern: str

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern)


class DetectRule(_RegexRuleView):
    content_type: ContentType
    priority: int


class ErrorRule(_RegexRuleView):
    severity: Severity
    tools: tuple[str, ...] = ()


class TallyRule(_RegexRuleView):
    # counts: the run's totals; clean: the run says nothing failed.
    says: Literal["counts", "clean"]
    tools: tuple[str, ...] = ()


class TurnRule(_RegexRuleView):
    role: TurnRole


class DefinitionRule(_RegexRuleView):
    languages: tuple[str, ...]

    def applies_to(self, language: str | None) -> bool:
        """Unknown language: every rule applies; known: only the rules that name it."""
        return language is None or language in self.languages

    def name_in(self, line: str) -> str | None:
        match = self.regex.search(line)
        return match.group("name") if match else None


class Titles(Section):
    max_chars: int
    ellipsis: str
    fallback: str

    def clip(self, title: str, max_chars: int | None = None) -> str:
        """Whitespace folded, cut to `max_chars` (default: the pack's) with the ellipsis."""
        limit = self.max_chars if max_chars is None else max_chars
        return clip_line(title, limit, self.ellipsis) or self.fallback


class Detection(Section):
    sample_bytes: int
    fallback: ContentType
    extensions: dict[str, ContentType] = Field(default_factory=dict)
    rules: tuple[DetectRule, ...]

    @cached_property
    def ordered_rules(self) -> tuple[DetectRule, ...]:
        """Active rules by descending priority; equal priorities keep pack order."""
        return tuple(sorted(active(self.rules), key=lambda rule: -rule.priority))

    def detect(self, text: str) -> ContentType:
        sample = text.encode("utf-8")[: self.sample_bytes].decode("utf-8", "ignore")
        for rule in self.ordered_rules:
            if rule.regex.search(sample):
                return rule.content_type
        return self.fallback


class Markdown(Section):
    title_heading_depth: int
    title_separator: str
    never_split_fences: bool
    oversize_split: Literal["paragraph", "line"]
    overlap_bytes: int


class Paragraphs(Section):
    min_sections: int
    max_sections: int
    max_section_bytes: int


class HeadingRule(_RegexRuleView):
    level: int

    def heading(self, match: re.Match[str]) -> tuple[int, int, str]:
        """(where the title starts, depth in the heading path, the title) of one match."""
        groups = self.regex.groupindex
        title_group = "title" if "title" in groups else 0
        number = match.group("number") if "number" in groups else None
        depth = self.level + (number.count(".") if number else 0)
        return match.start(title_group), depth, " ".join(match.group(title_group).split())


class BannerRule(HeadingRule):
    """A line that heads a section of a log report (a pytest failure, a CI step, a commit)."""


class Prose(Section):
    whole_max_bytes: int
    min_word_share: float
    min_words_per_line: float
    word_pattern: str
    max_sentence_end_share: float
    sentence_end_pattern: str
    min_function_word_share: float
    function_words: tuple[str, ...]

    @cached_property
    def words(self) -> frozenset[str]:
        return frozenset(self.function_words)

    @cached_property
    def word(self) -> re.Pattern[str]:
        return re.compile(self.word_pattern)

    @cached_property
    def sentence_end(self) -> re.Pattern[str]:
        return re.compile(self.sentence_end_pattern)


class PlainText(Section):
    paragraphs: Paragraphs
    prose: Prose
    window_lines: int
    overlap_lines: int
    whitespace_break_ratio: float
    heading_rules: tuple[HeadingRule, ...] = ()

    @cached_property
    def active_heading_rules(self) -> tuple[HeadingRule, ...]:
        return active(self.heading_rules)


class Json(Section):
    identity_fields: tuple[str, ...]
    array_batch_items: int
    max_key_path_depth: int
    key_path_separator: str
    max_identity_chars: int
    keep_minified_spelling: bool


class ErrorContext(Section):
    before_lines: int
    after_lines: int


class Log(Section):
    window_lines: int
    overlap_lines: int
    banner_rules: tuple[BannerRule, ...] = ()
    error_context: ErrorContext
    max_error_chunks: int
    title_strip_prefix: str
    line_prefix: str | None = None
    error_rules: tuple[ErrorRule, ...]
    tally_rules: tuple[TallyRule, ...] = ()
    tally_failure: str | None = None

    @cached_property
    def active_error_rules(self) -> tuple[ErrorRule, ...]:
        return active(self.error_rules)

    @cached_property
    def active_tally_rules(self) -> tuple[TallyRule, ...]:
        return active(self.tally_rules)

    @cached_property
    def tally_failure_regex(self) -> re.Pattern[str] | None:
        return re.compile(self.tally_failure) if self.tally_failure else None

    @cached_property
    def active_banner_rules(self) -> tuple[BannerRule, ...]:
        return active(self.banner_rules)

    @cached_property
    def title_prefix_regex(self) -> re.Pattern[str]:
        return re.compile(self.title_strip_prefix)

    @cached_property
    def line_prefix_regex(self) -> re.Pattern[str] | None:
        return re.compile(self.line_prefix) if self.line_prefix else None

    def classify(self, line: str) -> ErrorRule | None:
        """The first active error rule that flags this line, if any."""
        return next((rule for rule in self.active_error_rules if rule.regex.search(line)), None)


class Code(Section):
    window_lines: int
    overlap_lines: int
    min_definition_lines: int
    extensions: dict[str, str] = Field(default_factory=dict)
    definition_rules: tuple[DefinitionRule, ...]

    def rules_for(self, language: str | None) -> tuple[DefinitionRule, ...]:
        return tuple(rule for rule in active(self.definition_rules) if rule.applies_to(language))


class Csv(Section):
    rows_per_chunk: int
    repeat_header: bool


class Html(Section):
    convert_to: ContentType
    drop_elements: tuple[str, ...]


class Transcript(Section):
    window_lines: int
    overlap_lines: int
    max_tool_input_chars: int
    turn_rules: tuple[TurnRule, ...]

    @cached_property
    def active_turn_rules(self) -> tuple[TurnRule, ...]:
        return active(self.turn_rules)

    def turn_of(self, line: str) -> tuple[TurnRule, re.Match[str]] | None:
        """The first active rule whose pattern matches at the start of `line`, with its match."""
        for rule in self.active_turn_rules:
            match = rule.regex.match(line)
            if match:
                return rule, match
        return None


class Diff(Section):
    chunk_per: Literal["file", "hunk"]
    repeat_file_header: bool


class ChunkingPack(PackView):
    max_chunk_bytes: int
    min_chunk_bytes: int
    titles: Titles
    detection: Detection
    markdown: Markdown
    plaintext: PlainText
    json_: Json = Field(alias="json")
    log: Log
    code: Code
    csv: Csv
    html: Html
    transcript: Transcript
    diff: Diff

    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)


VIEW = ChunkingPack
