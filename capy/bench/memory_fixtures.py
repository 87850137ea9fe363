"""The memory benchmark's scenario files (fixtures/memory), loaded and checked: episodes, later
prompts, noise, blocking variants and benign commands, each with its fixed split."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Scenarios:
    episodes: list[dict[str, Any]]
    prompts: list[dict[str, Any]]
    noise: list[dict[str, Any]]
    blocking: list[dict[str, Any]]
    benign: list[dict[str, Any]]


def split_of(stable_id: str) -> str:
    """dev or held, from the id alone: sha256's first byte even is dev."""
    return "dev" if hashlib.sha256(stable_id.encode()).digest()[0] % 2 == 0 else "held"


def load_scenarios(folder: Path) -> Scenarios:
    from ruamel.yaml import YAML

    def read(name: str) -> dict[str, Any]:
        return YAML(typ="safe").load((folder / name).read_text(encoding="utf-8"))

    blocking = read("blocking.yaml")
    return Scenarios(
        episodes=read("episodes.yaml")["episodes"],
        prompts=read("prompts.yaml")["prompts"],
        noise=read("noise.yaml")["noise"],
        blocking=blocking["blocking"],
        benign=blocking["benign"],
    )
