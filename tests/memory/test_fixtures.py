"""The memory benchmark's scenario files: their size, shapes, labels and fixed splits."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import pytest
from ruamel.yaml import YAML

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "memory"
EVENTS = {"UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop"}


def _load(name: str):
    return YAML(typ="safe").load((FIXTURES / name).read_text(encoding="utf-8"))


def _split(stable_id: str) -> str:
    return "dev" if hashlib.sha256(stable_id.encode()).digest()[0] % 2 == 0 else "held"


def test_episodes_cover_the_ecosystems_and_shapes():
    episodes = _load("episodes.yaml")["episodes"]
    assert len(episodes) >= 40
    assert len({item["ecosystem"] for item in episodes}) >= 10
    assert set(Counter(item["shape"] for item in episodes)) == {
        "error-fix",
        "correction",
        "preference",
        "dangerous",
    }
    assert len({item["id"] for item in episodes}) == len(episodes)
    for item in episodes:
        assert item["lesson"]["type"] in ("rule", "anti_pattern", "preference")
        assert all(event["hook_event_name"] in EVENTS for event in item["events"])


@pytest.mark.parametrize(
    ("name", "key", "field"),
    [("episodes.yaml", "episodes", "id"), ("noise.yaml", "noise", "id")],
)
def test_splits_are_the_hash_of_the_id(name, key, field):
    for item in _load(name)[key]:
        assert item["split"] == _split(item[field]), item[field]


def test_prompts_are_labelled_and_split_with_their_episode():
    episodes = {item["id"]: item["split"] for item in _load("episodes.yaml")["episodes"]}
    prompts = _load("prompts.yaml")["prompts"]
    assert len(prompts) >= 150
    for item in prompts:
        expect = item["expect"]
        assert expect == "none" or expect in episodes, item["id"]
        wanted = _split(item["id"]) if expect == "none" else episodes[expect]
        assert item["split"] == wanted, item["id"]


def test_noise_and_blocking_sets_are_big_enough():
    assert len(_load("noise.yaml")["noise"]) >= 30
    blocking = _load("blocking.yaml")
    episodes = {item["id"]: item for item in _load("episodes.yaml")["episodes"]}
    blocking_episodes = {item["id"] for item in episodes.values() if item["lesson"].get("blocks")}
    assert {item["episode"] for item in blocking["blocking"]} == blocking_episodes
    assert all(len(item["variants"]) >= 5 for item in blocking["blocking"])
    benign = blocking["benign"]
    assert len(benign) >= 300
    assert len({item["command"] for item in benign}) == len(benign)
    for item in benign:
        assert item["split"] == _split(item["command"])
