"""Typed view of the retention pack: source kinds, the retention score, tiers, caps and cleanup."""

from __future__ import annotations

import math
import re
from datetime import timedelta
from enum import StrEnum
from functools import cached_property

from capy.rules.views.base import PackView, RuleView, Section, model_validator


class SourceKind(StrEnum):
    DURABLE = "durable"
    EPHEMERAL = "ephemeral"
    SESSION = "session"


class Tier(StrEnum):
    HOT = "hot"
    WARM = "warm"
    COLD = "cold"
    EVICTABLE = "evictable"


class OversizePolicy(StrEnum):
    TRUNCATE_MIDDLE = "truncate-middle"
    TRUNCATE_TAIL = "truncate-tail"
    REJECT = "reject"


class KindPolicy(Section):
    description: str
    ttl_hours: float | None
    in_default_search: bool

    @property
    def ttl(self) -> timedelta | None:
        return None if self.ttl_hours is None else timedelta(hours=self.ttl_hours)


class Kinds(Section):
    durable: KindPolicy
    ephemeral: KindPolicy
    session: KindPolicy

    def of(self, kind: SourceKind | str) -> KindPolicy:
        return getattr(self, SourceKind(kind).value)

    @property
    def default_search(self) -> tuple[SourceKind, ...]:
        return tuple(kind for kind in SourceKind if self.of(kind).in_default_search)


class Scoring(Section):
    decay_per_day: float
    recency_weight: float
    salience_weight: float
    access_weight: float
    access_saturation: int

    @model_validator(mode="after")
    def _weights_sum_to_one(self) -> Scoring:
        total = self.recency_weight + self.salience_weight + self.access_weight
        if not math.isclose(total, 1.0, abs_tol=1e-9):
            raise ValueError(f"scoring weights must sum to 1, not {total:g}")
        return self

    @property
    def half_life_days(self) -> float:
        return math.log(2) / self.decay_per_day

    def recency(self, days_idle: float) -> float:
        return math.exp(-self.decay_per_day * max(days_idle, 0.0))

    def access(self, access_count: int) -> float:
        return min(1.0, math.log1p(max(access_count, 0)) / math.log1p(self.access_saturation))

    def score(self, days_idle: float, salience: float, access_count: int) -> float:
        return (
            self.recency_weight * self.recency(days_idle)
            + self.salience_weight * salience
            + self.access_weight * self.access(access_count)
        )


class SalienceRule(RuleView):
    pattern: str
    weight: float

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern)


class Salience(Section):
    base: float
    sample_bytes: int
    rules: tuple[SalienceRule, ...]

    @cached_property
    def active_rules(self) -> tuple[SalienceRule, ...]:
        return tuple(rule for rule in self.rules if rule.active)

    def sample(self, text: str) -> str:
        """Head and tail halves of the content, where commands, summaries and errors sit."""
        half = self.sample_bytes // 2
        if len(text) <= self.sample_bytes:
            return text
        return text[:half] + "\n" + text[-half:]

    def of(self, text: str) -> float:
        sample = self.sample(text)
        total = self.base + sum(r.weight for r in self.active_rules if r.regex.search(sample))
        return min(1.0, max(0.0, total))


class Tiers(Section):
    hot: float
    warm: float
    cold: float

    @model_validator(mode="after")
    def _descending(self) -> Tiers:
        if not self.hot > self.warm > self.cold:
            raise ValueError("tiers must descend: hot > warm > cold")
        return self

    def bound(self, tier: Tier) -> float:
        return 0.0 if tier is Tier.EVICTABLE else getattr(self, tier.value)

    def of(self, score: float) -> Tier:
        for tier in (Tier.HOT, Tier.WARM, Tier.COLD):
            if score >= self.bound(tier):
                return tier
        return Tier.EVICTABLE

    def bounds(self) -> tuple[tuple[str, float], ...]:
        """(tier name, lowest score in it), best tier first; the last takes any score."""
        ranked = tuple((str(tier), self.bound(tier)) for tier in (Tier.HOT, Tier.WARM, Tier.COLD))
        return (*ranked, (str(Tier.EVICTABLE), -math.inf))


class Size(Section):
    max_source_bytes: int
    on_oversize: OversizePolicy
    store_soft_cap_bytes: int
    low_water_ratio: float


class EvictDurable(Section):
    never_accessed_only: bool
    below_tier: Tier
    min_age_days: int


class Cleanup(Section):
    dry_run: bool
    remove_expired: bool
    evict_durable: EvictDurable
    grace_hours: float
    batch_size: int
    vacuum_after_freed_ratio: float
    access_log_fold_bytes: int


class FetchRule(RuleView):
    pattern: str
    ttl_hours: float

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern)


class FetchCache(Section):
    default_ttl_hours: float
    rules: tuple[FetchRule, ...]

    @cached_property
    def active_rules(self) -> tuple[FetchRule, ...]:
        return tuple(rule for rule in self.rules if rule.active)

    def ttl_for(self, url: str) -> timedelta:
        """TTL of the first active rule matching the URL, else the default."""
        rule = next((r for r in self.active_rules if r.regex.search(url)), None)
        return timedelta(hours=rule.ttl_hours if rule else self.default_ttl_hours)


class Listing(Section):
    max_sources: int


class RetentionPack(PackView):
    kinds: Kinds
    scoring: Scoring
    salience: Salience
    tiers: Tiers
    size: Size
    cleanup: Cleanup
    fetch_cache: FetchCache
    listing: Listing


VIEW = RetentionPack
