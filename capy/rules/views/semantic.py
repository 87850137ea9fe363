"""Typed view of the semantic pack: embedding models as pinned artifacts, the embedder's pace."""

from __future__ import annotations

import re
from functools import cached_property

from pydantic import field_validator

from capy.rules.views.base import Field, PackView, RuleView, Section, active


class ModelPackage(Section):
    distribution: str
    version: str
    module: str


class ModelFile(Section):
    name: str
    sha256: str
    size: int
    origin: str = Field(alias="from")  # "package" | "capy"


class EmbeddingModel(RuleView):
    name: str
    dimensions: int
    max_tokens: int
    pooling: str
    licence: str
    package: ModelPackage | None = None
    files: tuple[ModelFile, ...]

    @property
    def model_id(self) -> str:
        """What vectors record as their model: the name and a short hash of the pinned files,
        so a re-exported file under the same name still counts as another model."""
        return f"{self.name}@{self.files[0].sha256[:12]}"

    def file(self, name: str) -> ModelFile:
        return next(entry for entry in self.files if entry.name == name)


class CapsuleContext(Section):
    before: int
    after: int
    chars: int

    @property
    def tag(self) -> str:
        """How capsule vectors were made, for their model id (a change re-embeds them)."""
        return f"b{self.before}a{self.after}c{self.chars}"


class UnseenRule(RuleView):
    kind: str
    pattern: str


class Embedding(Section):
    batch_size: int
    # Tokens per piece of a long chunk (absent: the model's max_tokens).
    window_tokens: int | None = None
    window_stride: int
    max_windows: int
    # Markup removed from a chunk's text before it is cut into pieces (active rules, in order).
    unseen: tuple[UnseenRule, ...] = ()
    cpu_share: float
    threads: int
    kinds: tuple[str, ...]
    idle_seconds: float
    quiet_seconds: float
    # A loaded model unused this long is dropped from memory (None: kept while the process runs).
    release_after_seconds: float | None = None
    # What a capsule's vector reads besides its chunk: its session neighbours (None: nothing).
    capsule_context: CapsuleContext | None = None

    @field_validator("unseen", mode="after")
    @classmethod
    def _active_only(cls, rules: tuple[UnseenRule, ...]) -> tuple[UnseenRule, ...]:
        return active(rules)

    @cached_property
    def _unseen_compiled(self) -> tuple[re.Pattern[str], ...]:
        return tuple(re.compile(rule.pattern) for rule in self.unseen)

    def without_unseen(self, text: str) -> str:
        """`text` less the markup no reader sees (the `unseen` rules, in order)."""
        for pattern in self._unseen_compiled:
            text = pattern.sub("", text)
        return text


class SemanticPack(PackView):
    default_model: str
    models: tuple[EmbeddingModel, ...]
    embedding: Embedding

    def vector_version(self, model: EmbeddingModel) -> str:
        """What stored vectors record: the model id and how chunks were cut into pieces, so a
        change of either marks older vectors stale."""
        embedding = self.embedding
        cut = f"w{embedding.window_stride}x{embedding.max_windows}"
        if embedding.window_tokens is not None:
            cut = f"t{embedding.window_tokens}{cut}"
        if embedding.unseen:
            from capy.digests import sha256

            rules = "\n".join(rule.pattern for rule in embedding.unseen)
            cut = f"{cut}u{sha256(rules.encode()).hexdigest()[:8]}"
        return f"{model.model_id}+{cut}"

    def capsule_vector_version(self, model: EmbeddingModel) -> str:
        """What capsule vectors record: the model id and the text rule they were embedded by."""
        context = self.embedding.capsule_context
        return f"{model.model_id}+capsule" + ("" if context is None else f"+{context.tag}")

    def model(self, model_id: str | None = None) -> EmbeddingModel | None:
        """The live model with this rule id (the pack's default when None)."""
        wanted = model_id or self.default_model
        return next((model for model in active(self.models) if model.id == wanted), None)


VIEW = SemanticPack
