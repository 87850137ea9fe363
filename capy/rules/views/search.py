"""Typed view of the search pack: query processing, fusion, boosts, fuzzy correction, throttle."""

from __future__ import annotations

import re
from functools import cached_property

from capy.codecache import compile_trusted
from capy.rules.views.base import PackView, RuleView, Section, model_validator, with_fields
from capy.rules.views.intents import Intents

_MAX_VERDICTS = 4096  # distinct query terms remembered per loaded pack


class Query(Section):
    max_terms: int
    max_bytes: int
    min_term_chars: int
    and_then_or: bool
    or_fallback_below: int
    strip_operators: tuple[str, ...]
    strip_chars: str
    trigram_min_chars: int
    # A lone capital letter is kept though shorter than min_term_chars (see the pack).
    keep_single_capitals: bool = False
    # OR passes over more terms than this use the porter list alone (see the pack).
    or_trigram_max_terms: int = 3
    # The trigram list runs only when the porter list found fewer candidates (see the pack).
    trigram_when_porter_below: int = 1000
    # SQLite virtual-machine steps a pass gets when it can only add to what was found (None:
    # no limit); work, not time, so results do not depend on the machine or its load.
    optional_pass_budget_steps: int | None = None
    # ... and the most chunks a store may hold for such a pass to run (None: any size): steps
    # alone do not bound it on a large store (see the pack).
    optional_pass_max_chunks: int | None = None
    # An optional pass is not run once the AND results fill every result shown (see the pack).
    skip_optional_when_shown: bool = False

    @cached_property
    def operator_words(self) -> frozenset[str]:
        return frozenset(word.upper() for word in self.strip_operators)


class Bm25(Section):
    title_weight: float
    content_weight: float
    # Each ranked list scores at most this many matching chunks, the newest (None: all).
    rank_window: int | None = None
    # An OR query starts from its rarest phrases, matching at most this many chunks in all,
    # and scores the rest only when they could still enter the results (see the pack).
    essential_rows: int = 0
    # The trigram list reads the chunks of at most this many of its best blocks (never fewer
    # than the results it gives; see the pack). 0: as many as the results.
    trigram_blocks: int = 0


class Fusion(Section):
    rrf_k: int
    candidate_multiplier: int
    min_candidates: int
    # Only the best limit * this fused candidates are re-ranked by the boosts.
    rerank_per_result: int = 2

    def candidates_for(self, limit: int) -> int:
        return max(limit * self.candidate_multiplier, self.min_candidates)

    def contribution(self, rank: int) -> float:
        """RRF share of a 1-based rank in one list."""
        return 1.0 / (self.rrf_k + rank)


class TitleBoost(Section):
    code: float
    prose: float


class PhraseBoost(Section):
    weight: float
    gap_chars: int
    saturate_at: int


class DefinitionBoost(Section):
    weight: float
    # Words of a declared name that are not in the query may be at most this long ("per").
    max_extra_word_chars: int
    # Declaration shapes; `{name}` stands for the wanted name.
    templates: tuple[str, ...]


class Boosts(Section):
    title: TitleBoost
    proximity: float
    # Queries with more terms than this get no proximity boost (see the pack).
    proximity_max_terms: int = 1_000
    phrase: PhraseBoost
    entity: float
    # Absent from a pack: no definition boost.
    definition: DefinitionBoost = DefinitionBoost(weight=0.0, max_extra_word_chars=0, templates=())


class DistanceBand(Section):
    min_chars: int
    max_distance: int


class Fuzzy(Section):
    enabled: bool
    trigger_below_results: int
    min_term_chars: int
    max_distance_by_length: tuple[DistanceBand, ...]
    max_candidates: int
    max_corrections: int
    cache_size: int

    @model_validator(mode="after")
    def _bands_ascend(self) -> Fuzzy:
        lengths = [band.min_chars for band in self.max_distance_by_length]
        if lengths != sorted(set(lengths)):
            raise ValueError("fuzzy.max_distance_by_length must ascend by min_chars")
        return self

    def max_distance(self, term: str) -> int:
        """Edit distance allowed for a term; 0 means it is never corrected."""
        if not self.enabled or len(term) < self.min_term_chars:
            return 0
        allowed = 0
        for band in self.max_distance_by_length:
            if len(term) >= band.min_chars:
                allowed = band.max_distance
        return allowed


class Diversity(Section):
    max_per_source: int


class Limits(Section):
    default_results: int
    max_results: int
    max_queries_per_call: int
    max_response_bytes: int

    def clamp(self, requested: int | None) -> int:
        if requested is None:
            return self.default_results
        return max(1, min(requested, self.max_results))


class ThrottleStage(Section):
    after_calls: int
    max_results: int
    message: str

    @property
    def refuses(self) -> bool:
        return self.max_results == 0


class Throttle(Section):
    window_seconds: int
    stages: tuple[ThrottleStage, ...]

    @model_validator(mode="after")
    def _stages_ascend(self) -> Throttle:
        counts = [stage.after_calls for stage in self.stages]
        if counts != sorted(set(counts)):
            raise ValueError("throttle.stages must ascend by after_calls")
        return self

    def stage_for(self, calls_in_window: int) -> ThrottleStage | None:
        """The stage for the Nth call in the window (1-based), or None when unthrottled."""
        current = None
        for stage in self.stages:
            if calls_in_window > stage.after_calls:
                current = stage
        return current


class Snippets(Section):
    window_bytes: int
    max_bytes: int
    merge_distance_bytes: int
    boundary_slack_bytes: int
    ellipsis: str
    whole_chunk_below_bytes: int
    title_chars: int


class EntityRule(RuleView):
    pattern: str

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return compile_trusted(self.pattern)


class Entities(Section):
    min_chars: int
    rules: tuple[EntityRule, ...]
    stopwords: frozenset[str]

    @cached_property
    def active_rules(self) -> tuple[EntityRule, ...]:
        return tuple(rule for rule in self.rules if rule.active)

    @cached_property
    def verdicts(self) -> dict[str, bool]:
        """Past answers of `is_entity`: ranking asks about the same terms for every candidate."""
        return {}

    def is_entity(self, term: str) -> bool:
        verdict = self.verdicts.get(term)
        if verdict is None:
            if len(self.verdicts) >= _MAX_VERDICTS:
                self.verdicts.clear()
            verdict = self.verdicts[term] = self._matches_a_rule(term)
        return verdict

    def _matches_a_rule(self, term: str) -> bool:
        if len(term) < self.min_chars or term.lower() in self.stopwords:
            return False
        return any(rule.regex.search(term) for rule in self.active_rules)


class Stopwords(Section):
    english: tuple[str, ...]
    query_filler: tuple[str, ...]

    @cached_property
    def all(self) -> frozenset[str]:
        return frozenset(self.english) | frozenset(self.query_filler)

    @cached_property
    def function_words(self) -> frozenset[str]:
        """The English list alone: words that make a query a sentence, not a list of names."""
        return frozenset(self.english)


class NegationPrefix(Section):
    prefix: str
    endings: tuple[str, ...]
    before: str | None = None  # only before a base starting with one of these letters
    written_apart: bool = False  # also hyphenated ("non-blocking"): match the two words too

    def applies_to(self, base: str, min_chars: int) -> bool:
        return (
            len(base) >= min_chars
            and base.endswith(self.endings)
            and (self.before is None or base[0] in self.before)
        )


class Negation(Section):
    min_base_chars: int
    or_max_terms: int  # longer queries name negated forms in AND groups only
    prefixes: tuple[NegationPrefix, ...]


class Morphology(Section):
    split_identifiers: bool
    negation: Negation
    compounds: tuple[str, ...]


class SynonymGroup(RuleView):
    terms: tuple[str, ...]


class Synonyms(Section):
    groups: tuple[SynonymGroup, ...]

    @cached_property
    def expansions(self) -> dict[str, tuple[str, ...]]:
        """Term -> the other terms of its group (active groups only)."""
        table: dict[str, tuple[str, ...]] = {}
        for group in self.groups:
            if not group.active:
                continue
            for term in group.terms:
                table[term] = tuple(other for other in group.terms if other != term)
        return table

    def expand(self, term: str) -> tuple[str, ...]:
        return self.expansions.get(term.lower(), ())


class VectorWeights(Section):
    and_found: float
    covered: float
    weak: float
    # Absent: a long covered query weighs as a short one.
    covered_long: float | None = None

    def of(self, gate: str) -> float:
        if gate == "covered_long":
            return self.covered if self.covered_long is None else self.covered_long
        return float(getattr(self, gate))


class Vectors(Section):
    """How the vector list joins the fusion (see the pack); absent: it never does."""

    exact_max_vectors: int = 0
    # Past the exact size, the sign prefilter (capy.semantic.sign_prefilter) up to this many;
    # absent: the vector list is left out past the exact size.
    approximate_max_vectors: int = 0
    approximate_rescore_share: float = 0.0
    depth: int = 0
    min_similarity: float = 1.0
    min_similarity_alone: float = 1.0
    # A query worded as a sentence (it holds a function word): absent, as min_similarity_alone.
    min_similarity_alone_worded: float | None = None
    coverage: float = 1.0
    # The same for a long query (`long_query_terms` or more); absent: `coverage`.
    coverage_long: float | None = None
    long_query_terms: int = 0  # 0: no query counts as long
    keep_agreed_first: bool = False
    # For a short query the gate calls weak, the lexical first hit is agreed on only when the
    # vector list ranks it this high (0: anywhere in the list, as for every other query).
    agree_within_weak: int = 0
    # ...unless that hit holds a query term the entity rules take for a name (an error code):
    # then anywhere, as for every other query.
    keep_named_first: bool = False
    weight: VectorWeights = VectorWeights(and_found=0.0, covered=0.0, weak=0.0)


class BoostWeights(Section):
    """A profile's boost weights; an absent one keeps the weight in `boosts`."""

    title_code: float | None = None
    title_prose: float | None = None
    proximity: float | None = None
    phrase: float | None = None
    entity: float | None = None
    definition: float | None = None

    def applied_to(self, base: Boosts) -> Boosts:
        def pick(mine: float | None, theirs: float) -> float:
            return theirs if mine is None else mine

        title = with_fields(
            base.title,
            code=pick(self.title_code, base.title.code),
            prose=pick(self.title_prose, base.title.prose),
        )
        return with_fields(
            base,
            title=title,
            proximity=pick(self.proximity, base.proximity),
            phrase=with_fields(base.phrase, weight=pick(self.phrase, base.phrase.weight)),
            entity=pick(self.entity, base.entity),
            definition=with_fields(
                base.definition, weight=pick(self.definition, base.definition.weight)
            ),
        )


class Profile(RuleView):
    """How chunks of some content types rank (the types the chunking pack detects)."""

    content_types: tuple[str, ...]
    boosts: BoostWeights = BoostWeights()


class SearchPack(PackView):
    query: Query
    bm25: Bm25
    fusion: Fusion
    boosts: Boosts
    fuzzy: Fuzzy
    diversity: Diversity
    limits: Limits
    throttle: Throttle
    snippets: Snippets
    entities: Entities
    stopwords: Stopwords
    synonyms: Synonyms
    intents: Intents = Intents()
    # Word forms beyond porter's (see capy.retrieval.morphology); None: none added.
    morphology: Morphology | None = None
    vectors: Vectors = Vectors()
    # Ranking by content type; a chunk of a type no active profile names ranks by `boosts`.
    profiles: tuple[Profile, ...] = ()

    @cached_property
    def boosts_by_type(self) -> dict[str, Boosts]:
        table: dict[str, Boosts] = {}
        for profile in self.profiles:
            if profile.active:
                weighted = profile.boosts.applied_to(self.boosts)
                for content_type in profile.content_types:
                    table.setdefault(content_type, weighted)
        return table

    def boosts_for(self, content_type: str) -> Boosts:
        """The boost weights for a chunk indexed as `content_type` ("" when unknown)."""
        return self.boosts_by_type.get(content_type, self.boosts)

    @model_validator(mode="after")
    def _limits_consistent(self) -> SearchPack:
        if self.limits.default_results > self.limits.max_results:
            raise ValueError("limits.default_results exceeds limits.max_results")
        return self


VIEW = SearchPack
