"""`capy bench memory`: replay the scenario files in fixtures/memory through the real hooks, as an
agent would, and measure what memory learned, said and blocked.

Everything runs in a scratch home (its own config, data, cache and keys): each episode and noise
session is fed as Claude Code hook payloads to `capy.hooks.dispatch.handle`, the capture spool is
drained into the capsule log, and memory learns from the capsules alone (no LLM). Then every
later prompt is submitted in a new session and the injected records are compared with the
labels; every blocking variant and benign command goes through PreToolUse. Figures are printed
per half (dev, held); the halves were fixed by hashing ids before any tuning.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from capy.bench.memory_fixtures import Scenarios, load_scenarios

HALVES = ("dev", "held")
GOALS = {
    "learned": 0.9,
    "learned_llm": 1.0,
    "noise_rejected": 0.9,
    "recall_at_3": 0.9,
    "false_injection": 0.05,
    "tokens_per_prompt": 300,
}
# The events memory adds work to, as the latency figures time them.
TIMED: dict[str, dict[str, Any]] = {
    "UserPromptSubmit": {"hook_event_name": "UserPromptSubmit", "prompt": "push the branch"},
    "PreToolUse benign": {
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git status"},
    },
    "PreToolUse blocked": {
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "timeout 5 git push --force"},
    },
}
_SHOWN = re.compile(r"\(memory ([0-9a-f]{8})\)")


@contextmanager
def scratch_home(root: Path) -> Iterator[Path]:
    """HOME, XDG dirs and the working directory moved under `root` for the run; restored after."""
    from capy.rules import ruleset

    names = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME")
    saved = {name: os.environ.get(name) for name in names}
    capy_vars = {name: value for name, value in os.environ.items() if name.startswith("CAPY_")}
    previous = os.getcwd()
    project = root / "project"
    project.mkdir(parents=True, exist_ok=True)
    (project / ".git").mkdir(exist_ok=True)
    for name, sub in zip(names, ("home", "config", "data", "cache", "state"), strict=True):
        os.environ[name] = str(root / sub)
    for name in capy_vars:
        del os.environ[name]
    os.chdir(project)
    ruleset._load_cached.cache_clear()
    try:
        yield project
    finally:
        os.chdir(previous)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        os.environ.update(capy_vars)
        ruleset._load_cached.cache_clear()


def send(project: Path, event: dict[str, Any], session: str) -> dict[str, Any]:
    """One hook payload through the real dispatcher; the platform's JSON answer (or {})."""
    from capy.hooks.dispatch import handle

    payload = {
        **event,
        "session_id": session,
        "cwd": str(project),
        "transcript_path": str(project / ".no-transcript.jsonl"),
    }
    name = event["hook_event_name"]
    outcome = handle(name, json.dumps(payload).encode(), platform="claude-code")
    return json.loads(outcome.stdout) if outcome.stdout.strip() else {}


def drain_and_learn(project: Path) -> None:
    from capy.capsules import open_capsules
    from capy.capsules.spool import drain_spool
    from capy.memory import learn

    with open_capsules(project_dir=project, notify=lambda _line: None) as store:
        drain_spool(store)
        learn(store)


def run(
    fixtures: Path, root: Path, progress: Any = None, *, instructions: bool = False
) -> dict[str, Any]:
    scenarios = load_scenarios(fixtures)
    with scratch_home(root) as project:
        for episode in scenarios.episodes:
            for event in episode["events"]:
                send(project, event, f"episode:{episode['id']}")
        for item in scenarios.noise:
            for event in item["events"]:
                send(project, event, f"noise:{item['id']}")
        drain_and_learn(project)
        records = _records(project)
        report = {
            "learned": _learned(scenarios, records),
            "noise": _noise(scenarios, records),
            "records": len(records),
        }
        report["prompts"] = _prompts(project, scenarios, records)
        report["blocking"] = _blocking(project, scenarios)
        report["latency"] = _latency(project)
        report["processes"] = _processes(project)
        if instructions:
            report["instructions"] = _instructions(project)
        report["reinforcement"] = _reinforcement(project, records)
        report["llm"] = _with_llm(project, scenarios)
    from capy.bench.memory_real import real_sessions

    report["real"] = real_sessions(fixtures, root / "real", fixtures.resolve().parents[1])
    report["goals"] = GOALS
    return report


def _with_llm(project: Path, scenarios: Scenarios) -> dict[str, Any]:
    """The same capsules learned again through a scripted chat model on loopback (last: the
    figures above are the no-LLM path's)."""
    from capy.bench.memory_llm import learn_with_judge

    shapes, fallbacks, records = learn_with_judge(project, scenarios.noise)
    return {
        "learned": _learned(scenarios, records),
        "noise": _noise(scenarios, records),
        "replies": dict(shapes),
        "fallbacks": fallbacks,
    }


def _records(project: Path) -> list[dict[str, Any]]:
    from capy.capsules import open_capsules
    from capy.memory import records_of

    with open_capsules(project_dir=project, notify=lambda _line: None) as store:
        return records_of(store)


def _taught_by(records: list[dict[str, Any]], session: str) -> list[dict[str, Any]]:
    return [record for record in records if session in record["sessions"]]


def _learned(scenarios: Scenarios, records: list[dict[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {half: {"episodes": 0, "learned": 0, "missed": []} for half in HALVES}
    for episode in scenarios.episodes:
        half = result[episode["split"]]
        half["episodes"] += 1
        lesson = episode["lesson"]
        found = [
            record
            for record in _taught_by(records, f"episode:{episode['id']}")
            if record["type"] == lesson["type"]
            and all(word.lower() in record["text"].lower() for word in lesson["words"])
            and (not lesson.get("blocks") or record.get("block_class"))
        ]
        if found:
            half["learned"] += 1
        else:
            half["missed"].append(episode["id"])
    return result


def _noise(scenarios: Scenarios, records: list[dict[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {half: {"events": 0, "rejected": 0, "kept": []} for half in HALVES}
    for item in scenarios.noise:
        half = result[item["split"]]
        half["events"] += 1
        if _taught_by(records, f"noise:{item['id']}"):
            half["kept"].append(item["id"])
        else:
            half["rejected"] += 1
    return result


def _prompts(project: Path, scenarios: Scenarios, records: list[dict[str, Any]]) -> dict[str, Any]:
    from capy.config import load_settings
    from capy.memory.digest import read_digest

    data_dir = str(load_settings(project).settings.data_dir)
    digest = read_digest(data_dir, str(project)) or {}
    per_token = int(digest.get("chars_per_token", 4))
    result: dict[str, Any] = {}
    for half in HALVES:
        result[half] = {"labelled": 0, "hits": 0, "none": 0, "false": 0, "tokens": [], "missed": []}
    for item in scenarios.prompts:
        half = result[item["split"]]
        answer = send(
            project,
            {"hook_event_name": "UserPromptSubmit", "prompt": item["prompt"]},
            f"prompt:{item['id']}",
        )
        context = answer.get("hookSpecificOutput", {}).get("additionalContext", "") or ""
        shown = _SHOWN.findall(context)[:3]
        half["tokens"].append(len(context) / per_token)
        if item["expect"] == "none":
            half["none"] += 1
            half["false"] += 1 if shown else 0
            continue
        half["labelled"] += 1
        wanted = {record["id"][:8] for record in _taught_by(records, f"episode:{item['expect']}")}
        if wanted & set(shown):
            half["hits"] += 1
        else:
            half["missed"].append(item["id"])
    return result


def _blocking(project: Path, scenarios: Scenarios) -> dict[str, Any]:
    result: dict[str, Any] = {
        half: {"variants": 0, "denied": 0, "benign": 0, "benign_denied": [], "allowed": []}
        for half in HALVES
    }
    split_of = {episode["id"]: episode["split"] for episode in scenarios.episodes}
    for group in scenarios.blocking:
        half = result[split_of[group["episode"]]]
        for command in group["variants"]:
            half["variants"] += 1
            if _denied(project, command):
                half["denied"] += 1
            else:
                half["allowed"].append(command)
    for item in scenarios.benign:
        half = result[item["split"]]
        half["benign"] += 1
        if _denied(project, item["command"]):
            half["benign_denied"].append(item["command"])
    return result


def _denied(project: Path, command: str) -> bool:
    event = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
    }
    answer = send(project, event, "blocking")
    decision = answer.get("hookSpecificOutput", {}).get("permissionDecision")
    reason = answer.get("hookSpecificOutput", {}).get("permissionDecisionReason", "")
    return decision == "deny" and "capy memory" in (reason or "")


def _latency(project: Path, runs: int = 25) -> dict[str, float]:
    """Median in-process time of the hook's handling (not the process start `capy bench
    hooks` measures) for the events memory adds work to."""
    cases = {"SessionStart": {"hook_event_name": "SessionStart", "source": "startup"}, **TIMED}
    found = {}
    for name, event in cases.items():
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            send(project, event, "latency")
            times.append((time.perf_counter() - start) * 1000)
        found[name] = round(statistics.median(times), 2)
    return found


def _reinforcement(project: Path, records: list[dict[str, Any]]) -> dict[str, Any]:
    """Feedback events (through the library API, kept as capsules) for a learned rule to fall
    below the prompt injection gate when it harms, then to rise above it again when it helps."""
    from capy.capsules import open_capsules
    from capy.memory import records_of, write_operation

    rules = [record for record in records if record["type"] == "rule"]
    if not rules:
        return {"skipped": "no learned rule"}
    record_id = rules[-1]["id"]
    result: dict[str, Any] = {}
    with open_capsules(project_dir=project, notify=lambda _line: None) as store:
        pack = store.rules.view("memory")
        limit = pack.feedback.reinforcement_events
        gate = pack.injection.prompt.min_confidence
        for verdict, done in (
            ("harmful", lambda record: record["confidence"] < gate),
            ("helpful", lambda record: record["confidence"] >= gate),
        ):
            events = None
            for count in range(1, limit + 1):
                operation = {"op": "feedback", "record": record_id, "verdict": verdict}
                write_operation(store, operation, source="cli", session_id="reinforcement")
                now = next(item for item in records_of(store) if item["id"] == record_id)
                if done(now):
                    events = count
                    break
            result[verdict] = {"events": events, "limit": limit}
    return result


def _processes(project: Path, runs: int = 9) -> dict[str, float]:
    """Median wall time of real hook processes (the command setup registers) with the memory
    digest in place, and of a bare Python start beside them (interleaved), in ms: the ratio is
    what the hooks' goal is stated in."""
    import subprocess

    commands = _commands(project)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, (argv, payload) in commands.items():
            start = time.perf_counter()
            subprocess.run(argv, input=payload, capture_output=True, cwd=project, check=False)
            times[name].append((time.perf_counter() - start) * 1000)
    return {name: round(statistics.median(values), 1) for name, values in times.items()}


def _instructions(project: Path) -> dict[str, int | None]:
    """The same processes' instructions under callgrind (after `_processes` warmed every cache),
    which the machine's load does not move: the hooks' goal is a ratio to the bare start."""
    from capy.bench.callgrind import available, instructions

    if not available():
        return {}
    return {
        name: instructions(argv, payload, project)
        for name, (argv, payload) in _commands(project).items()
    }


def _commands(project: Path) -> dict[str, tuple[list[str], bytes]]:
    """A bare Python start and each timed event's hook process, as argv and stdin."""
    import sys

    from capy.bench.hooks import hook_command

    registered = hook_command()
    commands = {"bare python": ([sys.executable, "-c", "pass"], b"")}
    for name, event in TIMED.items():
        # The very command `capy setup` registers, as `capy bench hooks` times it.
        argv = [*registered, "--platform", "claude-code", event["hook_event_name"]]
        payload = json.dumps({**event, "session_id": "latency", "cwd": str(project)}).encode()
        commands[name] = (argv, payload)
    return commands
