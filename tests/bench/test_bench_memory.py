"""`capy bench memory` on a small cut of the scenario files: the harness replays them through the
real hooks and reports every figure per half."""

from __future__ import annotations

import json
from pathlib import Path

from ruamel.yaml import YAML

from capy.cli import main

SCENARIOS = Path(__file__).resolve().parents[2] / "fixtures" / "memory"
EPISODES = (
    "git-force-push-main",
    "pnpm-not-npm",
    "uv-lock-out-of-date",
    "git-push-non-fast-forward",
)


def _cut(folder: Path) -> None:
    yaml = YAML(typ="safe")
    yaml.default_flow_style = False

    def read(name: str):
        return yaml.load((SCENARIOS / name).read_text(encoding="utf-8"))

    def write(name: str, data) -> None:
        with open(folder / name, "w", encoding="utf-8") as handle:
            yaml.dump(data, handle)

    episodes = read("episodes.yaml")
    episodes["episodes"] = [item for item in episodes["episodes"] if item["id"] in EPISODES]
    write("episodes.yaml", episodes)
    prompts = read("prompts.yaml")
    prompts["prompts"] = [item for item in prompts["prompts"] if item["expect"] in EPISODES] + [
        item for item in prompts["prompts"] if item["expect"] == "none"
    ][:6]
    write("prompts.yaml", prompts)
    noise = read("noise.yaml")
    noise["noise"] = noise["noise"][:6]
    write("noise.yaml", noise)
    blocking = read("blocking.yaml")
    blocking["blocking"] = [item for item in blocking["blocking"] if item["episode"] in EPISODES]
    blocking["benign"] = blocking["benign"][:30]
    write("blocking.yaml", blocking)


def test_the_harness_reports_each_figure_per_half(tmp_path, capsys):
    _cut(tmp_path)
    assert main(["bench", "memory", "--scenarios", str(tmp_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    learned = sum(report["learned"][half]["learned"] for half in ("dev", "held"))
    assert learned == len(EPISODES)
    blocking = report["blocking"]
    assert sum(blocking[half]["denied"] for half in ("dev", "held")) == 12
    assert all(blocking[half]["benign_denied"] == [] for half in ("dev", "held"))
    assert sum(report["noise"][half]["rejected"] for half in ("dev", "held")) == 6
    assert set(report["latency"]) == {
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse benign",
        "PreToolUse blocked",
    }
    assert report["reinforcement"]["harmful"]["events"] is not None
    # The same capsules through the scripted model on loopback: every lesson still learned, the
    # noise still rejected, and each failed reply (cut JSON, HTTP 500, prose) a logged fallback.
    llm = report["llm"]
    assert sum(llm["learned"][half]["learned"] for half in ("dev", "held")) == len(EPISODES)
    assert sum(llm["noise"][half]["rejected"] for half in ("dev", "held")) == 6
    faults = sum(llm["replies"].get(shape, 0) for shape in ("cut-json", "http-500", "prose"))
    assert faults >= 1 and llm["fallbacks"] == faults


def test_a_folder_without_scenarios_is_one_line(tmp_path, capsys):
    assert main(["bench", "memory", "--scenarios", str(tmp_path)]) == 2
    assert "no scenario files" in capsys.readouterr().err


def test_real_sessions_teach_their_labelled_lessons_and_nothing_unwanted(tmp_path, shared_testdata):
    from capy.bench.memory_real import real_sessions

    shared_testdata("claude-transcripts", "spotter")  # skips with its reason when absent
    real = real_sessions(SCENARIOS, tmp_path, SCENARIOS.parents[1])
    assert real["missed"] == [] and real["unwanted"] == []
    assert len(real["found"]) == real["lessons"] >= 2


def test_callgrind_counts_a_process_s_instructions(tmp_path):
    import sys

    import pytest

    from capy.bench.callgrind import available, instructions

    if not available():
        pytest.skip("valgrind is not installed")
    bare = instructions([sys.executable, "-I", "-S", "-c", "pass"], b"", tmp_path)
    more = instructions(
        [sys.executable, "-I", "-S", "-c", "import sys; sum(range(300000))"], b"", tmp_path
    )
    assert bare and more and more > bare + 1_000_000
