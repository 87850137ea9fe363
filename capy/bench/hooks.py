"""Hook latency: the median wall time of a `capy hook` process per representative payload, as a
ratio to a bare `python -c pass` of the same interpreter, measured interleaved in the same run.

A hook is a fresh process on every tool call, so this is what the agent waits for each time.
The run uses a throw-away project and home (shipped packs, default settings), warms the hook
cache and bytecode first (as after `pip install`, which compiles it), and also times the
in-process `capy.hooks.handle` call: what a running capy server pays when the host calls it
through an `mcp_tool` hook instead of starting a process. Goal: PreToolUse <= 2.5x.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_RATIO = 2.5
SESSION = "bench-session"

# (name, event, payload): Claude Code payloads as the hooks reference documents them.
CASES: tuple[tuple[str, str, dict], ...] = (
    (
        "PreToolUse Bash heavy (curl)",
        "PreToolUse",
        {
            "tool_name": "Bash",
            "tool_input": {"command": "curl -s https://api.example.com/v1/items?limit=500"},
        },
    ),
    (
        "PreToolUse Bash plain",
        "PreToolUse",
        {"tool_name": "Bash", "tool_input": {"command": "pytest -q tests/unit -k parser"}},
    ),
    (
        "PreToolUse WebFetch",
        "PreToolUse",
        {
            "tool_name": "WebFetch",
            "tool_input": {"url": "https://docs.python.org/3/library/re.html", "prompt": "flags"},
        },
    ),
    (
        "PreToolUse Read",
        "PreToolUse",
        {"tool_name": "Read", "tool_input": {"file_path": "/src/app/main.py"}},
    ),
    (
        "PreToolUse Agent prompt",
        "PreToolUse",
        {
            "tool_name": "Agent",
            "tool_input": {
                "description": "Find callers",
                "prompt": "List every caller of parse_config.",
                "subagent_type": "general-purpose",
            },
        },
    ),
    (
        "UserPromptSubmit",
        "UserPromptSubmit",
        {"prompt": "Fix the failing parser test and keep the public API unchanged."},
    ),
    (
        "PostToolUse Edit",
        "PostToolUse",
        {
            "tool_name": "Edit",
            "tool_input": {"file_path": "/src/app/parser.py", "old_string": "a", "new_string": "b"},
            "tool_response": {"success": True},
        },
    ),
)


def _payload(project: Path, event: str, fields: dict) -> bytes:
    common = {
        "session_id": SESSION,
        "transcript_path": str(project / "transcript.jsonl"),
        "cwd": str(project),
        "permission_mode": "default",
        "hook_event_name": event,
    }
    return json.dumps({**common, **fields}).encode()


def hook_command() -> list[str]:
    """The installed console script when there is one (what hosts run), else the same entry."""
    script = Path(sys.executable).with_name("capy")
    if script.is_file():
        return [str(script), "hook"]
    return [sys.executable, "-c", "import sys; from capy.entry import run; sys.exit(run())", "hook"]


def _environment(home: Path) -> dict[str, str]:
    environ = {
        key: value for key, value in os.environ.items() if not key.startswith(("CAPY_", "XDG_"))
    }
    environ.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed capy has its bytecode cached
    environ.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
    )
    return environ


def _timed(command: list[str], payload: bytes, environ: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, input=payload, capture_output=True, env=environ, cwd=cwd, check=False)
    return (time.perf_counter() - start) * 1000


def run(runs: int = 30) -> dict:
    scratch = Path(tempfile.mkdtemp(prefix="capy-bench-hooks-"))
    try:
        return _run(scratch, max(1, runs))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run(scratch: Path, runs: int) -> dict:
    project, home = scratch / "project", scratch / "home"
    (project / ".git").mkdir(parents=True)
    home.mkdir()
    environ = _environment(home)
    base = hook_command()
    bare_command = [sys.executable, "-c", "pass"]
    cases = [
        (name, [*base, "--platform", "claude-code", event], _payload(project, event, fields))
        for name, event, fields in CASES
    ]
    for _name, command, payload in cases:  # warm: rules cache, bytecode, guidance shown once
        _timed(command, payload, environ, project)
    samples: dict[str, list[float]] = {"bare": [], **{name: [] for name, _, _ in cases}}
    baseline = ("bare", bare_command, b"")
    for round_index in range(runs):
        # Rotated each round: whichever process runs first after a pause pays for it, and
        # that must not always be the same payload (nor the baseline).
        order = [baseline, *cases]
        shift = round_index % len(order)
        for name, command, payload in order[shift:] + order[:shift]:
            samples[name].append(_timed(command, payload, environ, project))
    bare = statistics.median(samples["bare"])
    rows = [_row(name, samples[name], bare) for name, _, _ in cases]
    pre_tool = [row for row in rows if row["name"].startswith("PreToolUse")]
    worst = max(row["ratio"] for row in pre_tool)
    return {
        "runs": runs,
        "baseline": f"{Path(sys.executable).name} -c pass",
        "baseline_ms": round(bare, 2),
        "command": " ".join(
            Path(part).name if index == 0 else part for index, part in enumerate(base)
        ),
        "results": rows,
        "in_process": _in_process(project, home, runs),
        "through_server": _through_server(project, environ, runs),
        "goal_ratio": GOAL_RATIO,
        "goals": [
            {
                "goal": f"PreToolUse median <= {GOAL_RATIO}x bare Python (worst payload)",
                "value": round(worst, 2),
                "met": worst <= GOAL_RATIO,
            }
        ],
    }


def _row(name: str, samples: list[float], bare: float) -> dict:
    ordered = sorted(samples)
    median = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "name": name,
        "median_ms": round(median, 2),
        "p95_ms": round(p95, 2),
        "ratio": round(median / bare, 2) if bare else None,
    }


def _through_server(project: Path, environ: dict[str, str], runs: int) -> list[dict]:
    from capy.bench.hook_server import through_server

    pre_tool = [case for case in CASES if case[1] == "PreToolUse"]
    payloads = [
        (name, event, json.loads(_payload(project, event, fields)))
        for name, event, fields in pre_tool
    ]
    return through_server(payloads, project, environ, runs)


def _in_process(project: Path, home: Path, runs: int) -> list[dict]:
    """`handle()` called in this process, as a server answering an mcp_tool hook would."""
    from capy.hooks import handle

    isolated = _environment(home)
    names = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME")
    saved = {key: os.environ.get(key) for key in names}
    saved |= {key: os.environ[key] for key in os.environ if key.startswith("CAPY_")}
    for key in saved:
        os.environ.pop(key, None)
    os.environ.update({key: isolated[key] for key in names})
    try:
        rows = []
        for name, event, fields in CASES:
            payload = _payload(project, event, fields)
            handle(event, payload, platform="claude-code", project_dir=project)
            samples = []
            for _ in range(runs):
                start = time.perf_counter()
                handle(event, payload, platform="claude-code", project_dir=project)
                samples.append((time.perf_counter() - start) * 1000)
            rows.append({"name": name, "median_ms": round(statistics.median(samples), 3)})
        return rows
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
