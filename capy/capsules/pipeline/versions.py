"""The derivation versions a pipeline run works to: the pack hashes of `store.stage_versions`,
plus the ids of the models a stage will use in this run (the chat model for summaries, the
semantic layer's embedder), so adding or changing a model marks older rows stale."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capy.capsules import CapsuleStore


@dataclass(frozen=True)
class RunModels:
    llm: Any = None  # capy.llm.ChatModel
    embedder: Any = None  # capy.capsules.stages.embed.Embedder


def find_models(store: CapsuleStore) -> RunModels:
    """The models configured for this store's project (none is the usual case)."""
    from capy.capsules.stages.embed import find_embedder

    return RunModels(llm=_configured_chat_model(store), embedder=find_embedder())


def _configured_chat_model(store: CapsuleStore) -> Any:
    from capy.config import load_settings
    from capy.config.errors import ConfigError
    from capy.llm import chat_model_from_settings

    try:
        settings = load_settings(store.location.project_root).settings
    except ConfigError:
        return None  # a broken config shows in every command; summaries stay extractive
    return chat_model_from_settings(settings)


def run_versions(store: CapsuleStore, models: RunModels) -> dict[str, str]:
    from capy.capsules.versions import stage_version

    versions = dict(store.stage_versions)
    if models.llm is not None and "summarise" in versions:
        versions["summarise"] = stage_version(store.rules, "summarise", [models.llm.model])
    if models.embedder is not None and "embed" in versions:
        versions["embed"] = stage_version(store.rules, "embed", [models.embedder.model_id])
    return versions
