"""The bad inputs of `capy bench hostile`: each a Case that runs a real capy process (CLI or
hook subprocess) under a deadline. Device files and FIFOs as paths, rule overlays built to stall
a parser or a regex, broken stores and data folders, a transcript line nested 100,000 deep,
malformed hook payloads. hostile_inputs runs them and counts what went wrong."""

from __future__ import annotations

import json
import os
import re
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from capy.bench.hostile_common import (
    Outcome,
    Scratch,
    capy_command,
    run_process,
    settled,
    write_transcript,
)

HOOK_PAYLOADS = (b'{"not json', b"", b"[]", b"null", b'{"hook_event_name": 5, "cwd": []}')
BACKTRACKING_INPUT = "a" * 32 + "!"
QUICK_REGEX_RUN = ("backtracking regex", "redact")
FULL_DEADLINE = 60.0
QUICK_DEADLINE = 15.0
# A hook is a lean start (0.2 s of CPU; 2.4 s wall at worst, cold, on a loaded 2-core
# machine), so a quick run calls a hook still running after 8 s a hang. The report prints
# the slowest finished run beside each deadline, so a thin margin shows.
QUICK_HOOK_DEADLINE = 8.0
# Every run in a fresh scratch would find capy's on-disk caches (compiled code, regexes, rule
# views) empty and build them: about 6x a warm start's CPU, paid by every case running at once.
# So the harness first makes one cold start alone (which fills the caches) and calls a run a
# hang only past HANG_RATIO of it, or past the deadline above when that is longer: a loaded
# machine stretches the deadline as much as it stretches a start, a calm one keeps 15 s / 60 s.
HANG_RATIO = 4.0


def scaled_deadline(quick: bool, cold_start: float) -> float:
    return round(max(QUICK_DEADLINE if quick else FULL_DEADLINE, HANG_RATIO * cold_start), 1)


def hook_deadline(deadline: float, quick: bool) -> float:
    """A quick run gives a hook (a lean start) the same share of the deadline as on a calm
    machine: 8 s of 15."""
    return round(deadline * QUICK_HOOK_DEADLINE / QUICK_DEADLINE, 1) if quick else deadline


@dataclass(frozen=True)
class Case:
    group: str
    name: str
    run: Callable[[], Outcome]
    # Whether the outcome lost the user's work (nothing archived, a snapshot not saved): an
    # answer can be polite and still drop everything, which no traceback check would see.
    lost: Callable[[Outcome], bool] | None = None
    cpu_bound: bool = False  # burns a core while it hangs: run with fewer neighbours
    # Blocks without burning anything while it hangs (a FIFO read): run beside everything
    # else from the start, so its deadline is waited out once, not in a worker's turn.
    waits: bool = False


def _cli(scratch: Scratch, *args: str, stdin: bytes | None = None, deadline: float, env=None):
    return lambda: run_process(
        capy_command(*args),
        env=env or scratch.env,
        cwd=scratch.project,
        stdin=stdin,
        deadline=deadline,
    )


def fifo_path(scratch: Scratch) -> Path:
    path = scratch.root / "inputs" / "a-fifo"
    if not path.exists():
        os.mkfifo(path)
    return path


def release_fifo(path: Path) -> None:
    """Give a reader still blocked on the FIFO its end of file, so no thread waits forever."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return  # no reader left
    os.close(fd)


# ---- overlays that should not stall anything -------------------------------------------------


def _overlay_header(name: str, extends: str) -> str:
    return (
        f"pack: {name}\nschema: overlay.v1\nversion: 1.0.0\n"
        f"description: A hostile overlay from capy bench hostile.\n"
        f'requires: ">=0.1"\nextends: {extends}\n'
    )


def billion_laughs() -> str:
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 10):
        lines.append(f"l{level}: &l{level} [" + ",".join([f"*l{level - 1}"] * 9) + "]")
    return (
        _overlay_header("laughs", "chunking")
        + "patch:\n  laughs:\n"
        + "".join(f"    {line}\n" for line in lines)
    )


def comment_flood(megabytes: int = 10) -> str:
    line = "# " + "padding " * 12 + "\n"
    return _overlay_header("flood", "chunking") + line * (megabytes * 1024 * 1024 // len(line))


def backtracking_detector() -> str:
    return _overlay_header("backtrack", "secrets") + (
        "patch:\n  detectors:\n"
        "    - id: backtrack.nested-quantifier\n      status: active\n"
        '      since: "0.1.0"\n      description: "A pattern with nested quantifiers."\n'
        "      kind: secret\n      keywords: [aaaa]\n      pattern: '(a+)+$'\n"
        "      examples:\n        match: ['aaaa']\n        no_match: ['bbbb']\n"
    )


def _overlay_cases(scratch: Scratch, deadline: float, quick: bool) -> list[Case]:
    cases = []
    for name, text in (
        ("billion-laughs YAML", billion_laughs),
        ("10 MB comment file", comment_flood),
        ("backtracking regex", backtracking_detector),
    ):
        project = scratch.root / f"overlay-{secrets.token_hex(3)}"
        rules = project / ".capy" / "rules"
        rules.mkdir(parents=True)
        (project / ".git").mkdir()
        (rules / "hostile.yaml").write_text(text(), encoding="utf-8")
        payload = json.dumps(
            {
                "session_id": "hostile",
                "cwd": str(project),
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": "ls"},
            }
        ).encode()
        runs = (
            ("rules validate", ["rules", "validate"], None),
            ("hook PreToolUse", ["hook", "PreToolUse"], payload),
            ("redact", ["redact", "-"], BACKTRACKING_INPUT.encode()),
        )
        for label, args, stdin in runs:
            if quick and label != "hook PreToolUse" and (name, label) != QUICK_REGEX_RUN:
                continue  # a quick run keeps the hook (every tool call pays it) and the regex
            limit = hook_deadline(deadline, quick) if args[0] == "hook" else deadline
            cases.append(
                Case(
                    "rule overlays",
                    f"{name}: {label}",
                    _in_project(scratch, project, args, stdin, limit),
                    cpu_bound=True,
                )
            )
    return cases


def _in_project(scratch: Scratch, project: Path, args, stdin, deadline):
    return lambda: run_process(
        capy_command(*args), env=scratch.env, cwd=project, stdin=stdin, deadline=deadline
    )


# ---- paths, stores, data folders -------------------------------------------------------------


def _path_cases(scratch: Scratch, deadline: float) -> list[Case]:
    fifo = fifo_path(scratch)
    cases = []
    for label, path in (("/dev/zero", "/dev/zero"), ("a FIFO", str(fifo))):
        busy = path == "/dev/zero"
        cases.append(
            Case(
                "paths",
                f"capy index {label}",
                _cli(scratch, "index", path, "--source", "p", deadline=deadline),
                cpu_bound=busy,
                waits=not busy,
            )
        )
        cases.append(
            Case(
                "paths",
                f"capy redact {label}",
                _cli(scratch, "redact", path, deadline=deadline),
                cpu_bound=busy,
                waits=not busy,
            )
        )
    return cases


def _store_cases(scratch: Scratch, deadline: float) -> list[Case]:
    inputs = scratch.root / "inputs"
    note = inputs / "note.md"
    note.write_text("# note\n\nThe quokka deploy runs at noon.\n", encoding="utf-8")
    folder = inputs / "a-folder"
    folder.mkdir()
    damaged = inputs / "damaged.db"
    cases = [
        Case(
            "stores",
            "--db naming a folder: index",
            _cli(scratch, "index", str(note), "--db", str(folder), deadline=deadline),
        ),
        Case(
            "stores",
            "--db naming a folder: search",
            _cli(scratch, "search", "quokka", "--db", str(folder), deadline=deadline),
        ),
    ]

    made = threading.Lock()

    def damage_then(args: list[str]) -> Callable[[], Outcome]:
        def run() -> Outcome:
            with made:
                if not damaged.exists():
                    run_process(
                        capy_command("index", str(note), "--db", str(damaged)),
                        env=scratch.env,
                        cwd=scratch.project,
                    )
                    _damage_page(damaged)
            return run_process(
                capy_command(*args, "--db", str(damaged)),
                env=scratch.env,
                cwd=scratch.project,
                deadline=deadline,
            )

        return run

    cases += [
        Case("stores", "damaged page: search", damage_then(["search", "quokka"])),
        Case("stores", "damaged page: index", damage_then(["index", str(note), "--source", "n2"])),
    ]
    data = scratch.root / "ro-home"
    env = {**scratch.env, "XDG_DATA_HOME": str(data)}
    if os.geteuid() == 0:
        # root writes through a 0555 folder: a data "folder" that is a file stands in for it.
        data.write_text("not a folder\n", encoding="utf-8")
        name = "data dir is a file: index"
    else:
        data.mkdir()
        data.chmod(0o555)
        name = "read-only data dir: index"
    cases.append(
        Case("stores", name, _cli(scratch, "index", str(note), deadline=deadline, env=env))
    )
    return cases


def _damage_page(path: Path) -> None:
    """Overwrite the middle of the second page: past the header, inside the b-tree pages."""
    size = path.stat().st_size
    offset = min(4096 + 512, max(0, size - 600))
    with path.open("r+b") as handle:
        handle.seek(offset)
        handle.write(os.urandom(512))


def _transcript_cases(scratch: Scratch, deadline: float) -> list[Case]:
    folder = scratch.root / "inputs" / "deep-transcripts"
    deep = "[" * 100_000 + "]" * 100_000
    prompts = [f"a quokka prompt {n} about the deploy and its steps" for n in range(5)]
    settled(write_transcript(folder, "hostile-deep", prompts, extra_line=deep))
    vault = str(scratch.root / "inputs" / "vault.db")
    return [
        Case(
            "transcripts",
            "vault import: a line nested 100,000 deep",
            _cli(
                scratch,
                "vault",
                "import",
                "--source",
                str(folder),
                "--path",
                vault,
                deadline=deadline,
            ),
            lost=lambda outcome: re.search(r"archived 0 of [1-9]", outcome.text) is not None,
        ),
        Case(
            "transcripts",
            "sweep: a line nested 100,000 deep",
            _cli(
                scratch,
                "sweep",
                "--source",
                str(folder),
                "--db",
                str(scratch.root / "inputs" / "swept.db"),
                deadline=deadline,
            ),
            # The session's other lines are the work: a failed session indexed none of them.
            lost=lambda outcome: re.search(r"\b[1-9][0-9]* failed", outcome.text) is not None,
        ),
    ]


def _in_order(*steps: Callable[[], Outcome]) -> Callable[[], Outcome]:
    """Run the steps one after another; one Outcome holding all they said."""

    def run() -> Outcome:
        outcomes = [step() for step in steps]
        return Outcome(
            "\n".join(o.stdout for o in outcomes),
            "\n".join(o.stderr for o in outcomes),
            outcomes[-1].returncode,
            any(o.hung for o in outcomes),
            sum(o.seconds for o in outcomes),
        )

    return run


# ---- hooks -----------------------------------------------------------------------------------


def _hook_cases(scratch: Scratch, deadline: float, quick: bool) -> list[Case]:
    from capy.rules import load_rules

    deadline = hook_deadline(deadline, quick)
    events = sorted(load_rules().view("platforms").platform("claude-code").events.values())
    payloads = HOOK_PAYLOADS[:3] if quick else HOOK_PAYLOADS
    cases = [
        Case(
            "hooks",
            f"malformed JSON to {event}: {payload[:12]!r}",
            _cli(
                scratch,
                "hook",
                "--platform",
                "claude-code",
                event,
                stdin=payload,
                deadline=deadline,
            ),
        )
        for event in events
        for payload in payloads
    ]
    session = f"hostile-nul-{secrets.token_hex(3)}"
    common = {
        "session_id": session,
        "cwd": str(scratch.project),
        "transcript_path": str(scratch.root / "none.jsonl"),
    }
    recorded = json.dumps(
        {
            **common,
            "hook_event_name": "PostToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "echo a\u0000b"},
            "tool_response": {"stdout": "a"},
        }
    ).encode()
    compact = json.dumps({**common, "hook_event_name": "PreCompact", "trigger": "auto"}).encode()
    cases += [
        Case(
            "hooks",
            "NUL in a recorded command, then PreCompact",
            _in_order(
                _cli(scratch, "hook", "PostToolUse", stdin=recorded, deadline=deadline),
                _cli(scratch, "hook", "PreCompact", stdin=compact, deadline=deadline),
            ),
            lost=lambda outcome: "could not be saved" in outcome.text,
        ),
    ]
    return cases


def all_cases(scratch: Scratch, deadline: float, quick: bool) -> tuple[list[Case], list[str]]:
    """Every CLI and hook case, and notes on those that cannot run here."""
    from capy.bench.hostile_full_disk import full_disk_cases

    full_disk, skipped = full_disk_cases(scratch, deadline, Case)
    cases = (
        _path_cases(scratch, deadline)
        + _overlay_cases(scratch, deadline, quick)
        + _store_cases(scratch, deadline)
        + full_disk
        + _transcript_cases(scratch, deadline)
        + _hook_cases(scratch, deadline, quick)
    )
    return cases, skipped
