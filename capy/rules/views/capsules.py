"""Typed view of the capsules pack: kinds, sources, known metadata keys, limits, the job queue
and the pipeline's stages."""

from __future__ import annotations

from capy.rules.views.base import PackView, RuleView, Section, active

# The Python types a known metadata key's JSON type admits (bool is not an integer here).
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict,),
}


class MetadataKey(Section):
    type: str
    description: str

    def admits(self, value: object) -> bool:
        if isinstance(value, bool) and self.type != "boolean":
            return False
        return isinstance(value, _JSON_TYPES[self.type])


class Limits(Section):
    max_content_bytes: int
    max_metadata_bytes: int


class Archive(Section):
    import_batch: int
    backfill_output_chars: int
    list_limit: int


class Queue(Section):
    lease_seconds: float
    max_attempts: int
    backoff_seconds: float
    backoff_factor: float
    max_backoff_seconds: float
    claim_batch: int
    claim_window: int = 512
    commit_seconds: float = 0.1

    def backoff_after(self, attempts: int) -> float:
        """Seconds to wait before attempt `attempts + 1`, after `attempts` failures."""
        wait = self.backoff_seconds * self.backoff_factor ** max(attempts - 1, 0)
        return min(wait, self.max_backoff_seconds)


class Stage(RuleView):
    name: str
    per: str
    after: tuple[str, ...]
    shaped_by: tuple[str, ...]
    optional: bool = False
    revision: int | None = None


class Worker(Section):
    round_seconds: float
    idle_seconds: float
    stop_seconds: float
    background_niceness: int = 0


class EntityRule(RuleView):
    type: str
    pattern: str
    metadata: str | None = None
    kinds: tuple[str, ...] = ()
    case: str = "keep"
    trim: str | None = None


class RelationRule(RuleView):
    relation: str
    pattern: str
    reverse: bool = False


class Relations(Section):
    window_chars: int
    rules: tuple[RelationRule, ...]


class SummaryLlm(Section):
    max_tokens: int
    max_input_chars: int
    system: str


class Summaries(Section):
    session_min_capsules: int
    scope_min_capsules: int
    window: int
    fanout: int
    sentences: int
    max_chars: int
    min_word_length: int
    kind_weights: dict[str, float]
    llm: SummaryLlm


class CaptureBounds(Section):
    prompt_chars: int
    response_chars: int
    diff_chars: int
    error_chars: int
    tool_input_chars: int
    tool_output_chars: int


class TranscriptShape(Section):
    message_fields: tuple[str, ...]
    assistant_role: str
    text_types: tuple[str, ...]


class Spool(Section):
    file: str
    drain_over_bytes: int
    drain_batch: int


class SourceLabel(Section):
    tools: tuple[str, ...]
    fields: tuple[str, ...]


class Capture(Section):
    """What hooks capture: event to kind, bounds, the spool and when it is drained."""

    events: dict[str, str]
    diff_tools: tuple[str, ...]
    bounds: CaptureBounds
    redaction_margin_chars: int
    transcript_tail_bytes: int
    transcript: TranscriptShape
    source_label: SourceLabel
    exit_status_fields: tuple[str, ...]
    file_fields: tuple[str, ...]
    spool: Spool
    drain_on: tuple[str, ...]


class ProxyTimeouts(Section):
    connect_seconds: float
    read_seconds: float
    write_seconds: float


class DropHeaders(Section):
    request: tuple[str, ...]
    response: tuple[str, ...]


class Proxy(Section):
    """`capy proxy`: its port, the hosts it answers, upstream timeouts, the headers it never
    forwards, and what each chat role's message becomes."""

    default_port: int
    loopback_hosts: tuple[str, ...]
    timeouts: ProxyTimeouts
    drop_headers: DropHeaders
    roles: dict[str, str]
    shared_roles: tuple[str, ...]
    bounds: dict[str, int]
    non_text_part: str


class RecallWeights(Section):
    lexical: float
    graph: float
    vector: float
    context: float
    speaker: float = 0.0
    answer: float = 0.0
    dated: float = 0.0
    followed: float = 0.0


class RecallAnchors(Section):
    """The first `top` hits of each of `lists` keep a place among the first `within` items."""

    lists: tuple[str, ...]
    top: int
    within: int


class RecallChunkWeights(Section):
    title: float
    content: float


class RecallAnswers(RuleView):
    """A capsule whose text matches `pattern` asks something; the capsule after it in its
    session answers, and gains `weight` times a neighbour's share in the context list."""

    pattern: str
    weight: float


class RegexRule(RuleView):
    pattern: str


class RecallDated(Section):
    """Questions asking when, and the capsules that say when (see the pack)."""

    from_top: int
    question: RegexRule
    moment: RegexRule


class RecallFollowed(Section):
    """Questions asking what came of an event, answered by what followed it (see the pack)."""

    from_top: int
    reach: int
    question: RegexRule


class RecallContext(Section):
    from_top: int
    reach: int
    answers: RecallAnswers | None = None  # None: every neighbour gains alike


class RecallGraph(Section):
    max_entities: int
    max_capsules: int
    max_entity_capsules: int
    hop_neighbours: int


class RecallDuplicates(Section):
    shingle_words: int
    min_similarity: float


class SpeakerRule(RuleView):
    """A question that names who spoke, and the capsule kinds holding that speaker's words."""

    pattern: str
    kinds: tuple[str, ...]


class RecallVectors(Section):
    exact_rows: int
    shortlist_rows: int
    # While word searches matched the question (None: the search pack's min_similarity_alone,
    # which holds whenever none did).
    min_similarity: float | None = None
    # True: the first hit without the vector list stays first when the vector list holds it
    # too; False: whether or not; None: the fusion alone decides.
    keep_agreed_first: bool | None = None


class RecallLexical(Section):
    """The lexical list's own bounds on the search pack's (None: the search pack's)."""

    rank_window: int | None = None
    essential_rows: int | None = None
    trigram_when_porter_below: int | None = None


class Recall(Section):
    """How recall ranks, fuses, folds and fits capsules into a brief (see the pack)."""

    default_budget_tokens: int
    min_budget_tokens: int
    max_budget_tokens: int
    chars_per_token: float
    candidates: int
    rrf_k: int
    weights: RecallWeights
    chunk_weights: RecallChunkWeights
    lexical: RecallLexical | None = None  # None: the search pack's bounds
    recency_weight: float
    graph: RecallGraph
    context: RecallContext
    dated: RecallDated | None = None  # None: no dated list
    followed: RecallFollowed | None = None  # None: no followed list
    relevance_floor: float
    floor_power: float | None = None
    anchors: RecallAnchors | None = None  # None: the fusion alone orders the items
    speakers: tuple[SpeakerRule, ...] = ()
    duplicates: RecallDuplicates
    summaries_first_below_tokens: int
    vectors: RecallVectors | None = None  # None: every vector is scored
    max_items: int
    item_chars: int

    def budget(self, requested: int | None) -> int:
        if requested is None:
            return self.default_budget_tokens
        return max(self.min_budget_tokens, min(int(requested), self.max_budget_tokens))


class CapsulesPack(PackView):
    kinds: dict[str, str]
    sources: dict[str, str]
    metadata: dict[str, MetadataKey]
    limits: Limits
    archive: Archive
    queue: Queue
    stages: tuple[Stage, ...]
    worker: Worker
    entities: tuple[EntityRule, ...] = ()
    relations: Relations
    summaries: Summaries
    capture: Capture | None = None
    proxy: Proxy | None = None

    recall: Recall | None = None

    @property
    def live_stages(self) -> tuple[Stage, ...]:
        return active(self.stages)

    def stage(self, name: str) -> Stage | None:
        return next((stage for stage in self.live_stages if stage.name == name), None)

    def metadata_problem(self, key: str, value: object) -> str | None:
        """Why `value` may not stand under the known key `key`, or None when it may."""
        known = self.metadata.get(key)
        if known is None or value is None or known.admits(value):
            return None
        return f"metadata key {key!r} must be a {known.type}, not {type(value).__name__}"


VIEW = CapsulesPack
