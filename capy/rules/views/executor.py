"""Typed view of the executor pack: languages, the sandbox environment and its limits."""

from __future__ import annotations

import re
from collections.abc import Mapping
from enum import StrEnum
from functools import cached_property

from capy.rules.views.base import PackView, RuleView, Section, active

_ARGV_PLACEHOLDER = re.compile(r"\{(runtime|file|dir|binary)\}")


class WorkingDir(StrEnum):
    PROJECT = "project"
    TEMP = "temp"


class PreludePlacement(StrEnum):
    PREPEND = "prepend"
    WRAPPER = "wrapper"


class Inherit(StrEnum):
    ALL = "all"
    PASSTHROUGH_ONLY = "passthrough-only"


def fill_argv(template: tuple[str, ...], **values: str) -> list[str]:
    """Replace {runtime}, {file}, {dir} and {binary} in each argument; other text stays as is."""
    return [_ARGV_PLACEHOLDER.sub(lambda match: values[match.group(1)], arg) for arg in template]


class Runtime(Section):
    command: str
    run: tuple[str, ...] | None = None
    compile: tuple[str, ...] | None = None
    file_name: str | None = None


class RuntimePlan(Section):
    """What running one language with one runtime candidate takes, overrides applied."""

    command: str
    file_name: str
    compile: tuple[str, ...] | None
    run: tuple[str, ...]


class Wrapper(Section):
    description: str
    when: str | None = None
    unless: str | None = None
    template: str

    @cached_property
    def when_regex(self) -> re.Pattern[str] | None:
        return re.compile(self.when) if self.when else None

    @cached_property
    def unless_regex(self) -> re.Pattern[str] | None:
        return re.compile(self.unless) if self.unless else None

    def applies_to(self, code: str) -> bool:
        if self.when_regex is not None and not self.when_regex.search(code):
            return False
        return self.unless_regex is None or not self.unless_regex.search(code)

    def wrap(self, code: str, prelude: str = "") -> str:
        """Literal replacement, so the braces of Go or Rust code in the template are safe."""
        return self.template.replace("{prelude}", prelude).replace("{code}", code)


class FileContent(Section):
    placement: PreludePlacement
    prelude: str


class SoftFailure(Section):
    exit_codes: tuple[int, ...]
    needs_stdout: bool


class Language(RuleView):
    language: str
    aliases: tuple[str, ...] = ()
    file_name: str
    cwd: WorkingDir
    compile: tuple[str, ...] | None = None
    run: tuple[str, ...]
    runtimes: tuple[Runtime, ...]
    wrappers: tuple[Wrapper, ...] = ()
    soft_failure: SoftFailure | None = None
    file_content: FileContent

    @property
    def names(self) -> tuple[str, ...]:
        """Every name a caller may use for this language, lowercased."""
        return (self.language, *(alias.lower() for alias in self.aliases))

    def plan(self, runtime: Runtime) -> RuntimePlan:
        return RuntimePlan(
            command=runtime.command,
            file_name=runtime.file_name or self.file_name,
            compile=runtime.compile if runtime.compile is not None else self.compile,
            run=runtime.run or self.run,
        )

    def is_soft_failure(self, exit_code: int | None, stdout: str) -> bool:
        """Whether an exit reports a result rather than a crash (grep's 1: nothing matched)."""
        rule = self.soft_failure
        if rule is None or exit_code not in rule.exit_codes:
            return False
        return bool(stdout.strip()) or not rule.needs_stdout

    def wrapper_for(self, code: str) -> Wrapper | None:
        return next((wrapper for wrapper in self.wrappers if wrapper.applies_to(code)), None)

    def source(self, code: str, *, with_file_content: bool = False) -> str:
        """The program text to write: wrapped if a wrapper applies, with the prelude if asked."""
        prelude = self.file_content.prelude if with_file_content else ""
        wrapper = self.wrapper_for(code)
        if self.file_content.placement is PreludePlacement.WRAPPER:
            return wrapper.wrap(code, prelude) if wrapper else code
        wrapped = wrapper.wrap(code) if wrapper else code
        return prelude + wrapped


class EnvVar(RuleView):
    name: str


class EnvPrefix(RuleView):
    prefix: str


class EnvOverride(RuleView):
    name: str
    value: str


class Env(Section):
    inherit: Inherit
    strip: tuple[EnvVar, ...]
    strip_prefixes: tuple[EnvPrefix, ...]
    passthrough: tuple[EnvVar, ...]
    overrides: tuple[EnvOverride, ...]

    @cached_property
    def strip_names(self) -> frozenset[str]:
        return frozenset(rule.name for rule in active(self.strip))

    @cached_property
    def prefixes(self) -> tuple[str, ...]:
        return tuple(rule.prefix for rule in active(self.strip_prefixes))

    @cached_property
    def passthrough_names(self) -> frozenset[str]:
        return frozenset(rule.name for rule in active(self.passthrough))

    @cached_property
    def override_values(self) -> dict[str, str]:
        return {rule.name: rule.value for rule in active(self.overrides)}

    def build(
        self, environ: Mapping[str, str], *, case_insensitive: bool = False
    ) -> dict[str, str]:
        """The subprocess environment: inherited, stripped, passthrough kept, overrides set.

        `case_insensitive` is for Windows, where `Path` and `PATH` are one variable.
        """
        fold = str.upper if case_insensitive else str

        def folded(names: frozenset[str]) -> frozenset[str]:
            return frozenset(fold(name) for name in names)

        keep = folded(self.passthrough_names)
        strip = folded(self.strip_names)
        prefixes = tuple(fold(prefix) for prefix in self.prefixes)
        result: dict[str, str] = {}
        inherit_all = self.inherit is Inherit.ALL
        for name, value in environ.items():
            key = fold(name)
            stripped = key in strip or key.startswith(prefixes)
            if key in keep or (inherit_all and not stripped):
                result[name] = value
        overrides = {fold(name): (name, value) for name, value in self.override_values.items()}
        result = {name: value for name, value in result.items() if fold(name) not in overrides}
        result.update(dict(overrides.values()))
        return result


class Timeout(Section):
    default_seconds: float
    max_seconds: float
    kill_grace_seconds: float

    def clamp(self, requested: float | None) -> float:
        if requested is None or requested <= 0:
            return self.default_seconds
        return min(requested, self.max_seconds)


class LineWeights(Section):
    substring_factor: float
    stem_factor: float
    min_anchor_share: float
    top_hit_line: bool
    # Absent: query words side by side count as themselves only.
    phrase_factor: float = 0.0


class RecordLines(Section):
    max_line_bytes: int
    max_record_bytes: int
    max_short_field_bytes: int


class LongLines(Section):
    windows: int = 1
    window_bytes: int = 400


class IntentReply(Section):
    max_reply_bytes: int
    max_sections: int
    max_section_bytes: int
    problem_severities: tuple[str, ...]
    max_problem_lines: int
    max_problem_bytes: int
    context_lines_before: int
    context_lines_after: int
    block_continuation: str | None = None
    block_lines_after: int = 0
    # A comment line: an anchor on it opens the block of the line it describes (see the pack).
    comment_line: str | None = None
    # A line naming a key-value record, shown with an answer inside it (see the pack).
    record_identity: str | None = None
    record_identity_reach: int = 0
    max_line_bytes: int
    max_terms: int
    max_terms_with_sections: int | None = None  # None: max_terms
    relevance_floor: float
    nothing_matched_bytes: int
    line_weights: LineWeights
    records: RecordLines
    long_lines: LongLines = LongLines()
    section_share_of_best: float = 0.0
    full_room_relevance: float = 0.0
    least_room_share: float = 1.0

    @property
    def terms_with_sections(self) -> int:
        """How many distinctive terms a reply that shows matching sections lists."""
        if self.max_terms_with_sections is None:
            return self.max_terms
        return self.max_terms_with_sections

    def room_share(self, relevance: float) -> float:
        """The share of max_reply_bytes the sections get for a best relevance of `relevance`."""
        if self.full_room_relevance <= 0:
            return 1.0
        return min(1.0, max(self.least_room_share, relevance / self.full_room_relevance))


class LongOutputReply(Section):
    head_bytes: int
    tail_bytes: int


class Output(Section):
    max_returned_bytes: int
    head_ratio: float
    cut_at_line_boundary: bool
    truncation_marker: str
    hard_cap_bytes: int
    intent_threshold_bytes: int
    intent_reply: IntentReply
    index_threshold_bytes: int
    long_output_reply: LongOutputReply

    @property
    def head_bytes(self) -> int:
        return int(self.max_returned_bytes * self.head_ratio)

    @property
    def tail_bytes(self) -> int:
        return self.max_returned_bytes - self.head_bytes

    def marker(self, omitted_bytes: int, omitted_lines: int) -> str:
        return self.truncation_marker.replace("{omitted_bytes}", f"{omitted_bytes:,}").replace(
            "{omitted_lines}", f"{omitted_lines:,}"
        )


class Processes(Section):
    max_new_processes: int


class Memory(Section):
    max_bytes: int | None


class Batch(Section):
    min_concurrency: int
    max_concurrency: int
    default_concurrency: int

    def clamp(self, requested: int | None) -> int:
        if requested is None:
            return self.default_concurrency
        return max(self.min_concurrency, min(requested, self.max_concurrency))


class Background(Section):
    max_jobs: int
    max_runtime_seconds: int
    buffer_bytes: int


class Limits(Section):
    timeout: Timeout
    output: Output
    processes: Processes
    memory: Memory
    batch: Batch
    background: Background


class NetworkMode(StrEnum):
    ON = "on"
    OFF = "off"


class Network(Section):
    default: NetworkMode


class IsolationMount(Section):
    target: str
    type: str
    options: str


class PrivateTmp(Section):
    folders: tuple[str, ...]
    options: str
    mode: str
    shown: tuple[str, ...]


class Isolation(Section):
    required: bool
    mounts: tuple[IsolationMount, ...]
    private_tmp: PrivateTmp
    keep_capabilities: tuple[str, ...]
    ready_spawners: int


class FileContentEnv(Section):
    path_env: str


class ExecutorPack(PackView):
    file_content: FileContentEnv
    languages: tuple[Language, ...]
    env: Env
    limits: Limits
    network: Network
    isolation: Isolation

    @cached_property
    def by_name(self) -> dict[str, Language]:
        """Active languages keyed by name and by every alias, lowercased."""
        table: dict[str, Language] = {}
        for language in active(self.languages):
            for name in language.names:
                table.setdefault(name.lower(), language)
        return table

    def language(self, name: str) -> Language | None:
        return self.by_name.get(name.strip().lower())


VIEW = ExecutorPack
