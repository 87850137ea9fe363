"""What capsule capture adds to a hook: every event timed with capture on and off (the setting
`hooks.capture`, through CAPY_HOOKS__CAPTURE) in the same interleaved rounds, reported as the
added milliseconds at the median and the on/off ratio. Goal: at most 5 ms added on any event.

The payloads are what an agent sends: a prompt, a shell call with a page of output, an edit
with Claude Code's structured patch, a failure, a Stop whose transcript is a megabyte (the hook
reads its end), and the session's boundaries (SessionEnd also starts the spool's drainer).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

GOAL_ADDED_MS = 5.0
DRAINER_MODULE = b"capy.drain_start"  # in the command line of every drainer a hook starts
DRAINER_WAIT_S = 30.0
OFF_SUFFIX = ", capture off"
CAPTURE_SWITCH = "CAPY_HOOKS__CAPTURE"

_OUTPUT = "\n".join(f"tests/unit/test_parser.py::test_case_{n} PASSED" for n in range(40))
_PATCH = [
    {
        "oldStart": 10,
        "oldLines": 3,
        "newStart": 10,
        "newLines": 3,
        "lines": [" def parse(text):", "-    return text.split(' ')", "+    return text.split()"],
    }
]

# (name, event, payload fields) for the events the hooks bench does not time already.
CAPTURE_CASES: tuple[tuple[str, str, dict], ...] = (
    (
        "PostToolUse Bash with output",
        "PostToolUse",
        {
            "tool_name": "Bash",
            "tool_input": {"command": "pytest -q tests/unit"},
            "tool_response": {"stdout": _OUTPUT, "stderr": "", "interrupted": False},
            "tool_use_id": "toolu_bench_1",
        },
    ),
    (
        "PostToolUse Edit with patch",
        "PostToolUse",
        {
            "tool_name": "Edit",
            "tool_input": {
                "file_path": "/src/app/parser.py",
                "old_string": "    return text.split(' ')",
                "new_string": "    return text.split()",
            },
            "tool_response": {"filePath": "/src/app/parser.py", "structuredPatch": _PATCH},
        },
    ),
    (
        "PostToolUseFailure",
        "PostToolUseFailure",
        {
            "tool_name": "Bash",
            "tool_input": {"command": "make lint"},
            "error": "make: *** No rule to make target 'lint'.  Stop.",
        },
    ),
    ("Stop (1 MB transcript)", "Stop", {"stop_hook_active": False}),
    ("SessionStart", "SessionStart", {"source": "startup"}),
    ("SessionEnd", "SessionEnd", {"reason": "exit"}),
)


def drainers_settled(project: Path, limit_s: float = DRAINER_WAIT_S) -> Callable[[], None]:
    """A `settle` step for the timed rounds: wait (untimed) until no spool drainer started for
    `project` is running. SessionEnd starts one as the session ends; left running, its CPU
    lands on whichever process the rotation times next, capture on or off alike. The drainer
    exists once the hook has exited (the hook forks it), so looking for its process has no
    race. Without /proc there is nothing to wait for."""
    import time

    marker = str(project).encode()

    def running() -> bool:
        try:
            pids = [name for name in os.listdir("/proc") if name.isdigit()]
        except OSError:
            return False
        for pid in pids:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    line = handle.read()
            except OSError:
                continue
            if DRAINER_MODULE in line and marker in line:
                return True
        return False

    def settle() -> None:
        deadline = time.monotonic() + limit_s
        while running() and time.monotonic() < deadline:
            time.sleep(0.02)

    return settle


def capture_off_environment(environ: dict[str, str]) -> dict[str, str]:
    return {**environ, CAPTURE_SWITCH: "false"}


def write_transcript(path: Path, size: int = 1 << 20) -> None:
    """A Claude Code transcript of about `size` bytes whose last line is the agent's answer."""
    lines = []
    written = 0
    turn = 0
    while written < size:
        user = {"type": "user", "message": {"role": "user", "content": f"step {turn}: go on"}}
        answer = {
            "type": "assistant",
            "uuid": f"line-{turn}",
            "message": {
                "role": "assistant",
                "id": f"msg_{turn}",
                "content": [{"type": "text", "text": f"Step {turn} done. " + "x" * 400}],
            },
        }
        for entry in (user, answer):
            line = json.dumps(entry)
            lines.append(line)
            written += len(line) + 1
        turn += 1
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def capture_rows(samples: dict[str, list[float]], names: list[str]) -> list[dict]:
    """Per case: the median with capture on and off, what capture adds, and the ratio."""
    import statistics

    rows = []
    for name in names:
        on = statistics.median(samples[name])
        off = statistics.median(samples[name + OFF_SUFFIX])
        rows.append(
            {
                "name": name,
                "on_ms": round(on, 2),
                "off_ms": round(off, 2),
                "added_ms": round(on - off, 2),
                "ratio": round(on / off, 3) if off else None,
            }
        )
    return rows


def capture_goal(rows: list[dict]) -> dict:
    worst = max(rows, key=lambda row: row["added_ms"])
    return {
        "goal": f"capture adds <= {GOAL_ADDED_MS:g} ms to a hook's median (worst: {worst['name']})",
        "value": worst["added_ms"],
        "met": worst["added_ms"] <= GOAL_ADDED_MS,
    }


def capture_table(report: dict):
    from capy.bench.report import Table, fmt

    return Table(
        f"capsule capture on and off, median of {report['runs']} processes each, same rounds",
        ("payload", "on ms", "off ms", "added ms", "on/off"),
        [
            (
                row["name"],
                f"{row['on_ms']:.1f}",
                f"{row['off_ms']:.1f}",
                f"{row['added_ms']:+.2f}",
                fmt(row["ratio"], 3),
            )
            for row in report["capture"]
        ],
        notes=[
            "the spool drainer a SessionEnd starts runs to its end, untimed, before the next "
            "process is timed (it runs once the session is over)"
        ],
    )
