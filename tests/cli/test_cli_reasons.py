"""`capy sweep` and `capy vault import` say why sessions were skipped, not only how many, and
show a progress bar on a terminal (stderr) but never in a pipe. Real `capy` processes."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from terminal_helpers import on_terminal, piped

SETTLED = 1_700_000_000  # long before the sweep's settle time: not live


def _session(folder: Path, name: str, prompt: str, *, cwd: str, settled: bool = True) -> Path:
    line = {
        "type": "user",
        "message": {"role": "user", "content": prompt},
        "cwd": cwd,
        "sessionId": name,
        "uuid": "u1",
        "timestamp": "2026-01-05T10:00:00Z",
    }
    path = folder / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    if settled:
        os.utime(path, (SETTLED, SETTLED))
    return path


def _sessions(root: Path, project: Path) -> Path:
    folder = root / "transcripts"
    _session(folder, "small-one", "hi", cwd=str(project))
    _session(folder, "small-two", "hello there", cwd=str(project))
    _session(folder, "live-one", "deploy " * 30, cwd=str(project), settled=False)
    _session(folder, "live-two", "release " * 30, cwd=str(project), settled=False)
    _session(folder, "elsewhere", "migrate the database " * 10, cwd="/nonexistent/project")
    return folder


def test_sweep_prints_each_outcomes_reason(project_dir, tmp_path):
    folder = _sessions(tmp_path, project_dir)
    done = piped("sweep", "--source", str(folder), "--dry-run")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1] == "skipped: 2 too-small, 2 live, 1 no-project"
    # One reason shared by every live session: said once, with the count.
    live = next(line for line in lines if " live: " in line)
    assert re.fullmatch(r"  2 live: modified in the last \d+ seconds", live)
    # Reasons that differ are given per session, with its path.
    small = [line for line in lines if line.startswith("  too-small: ")]
    assert len(small) == 2 and all("the sweep needs" in line for line in small)
    assert any("small-one.jsonl: 1 prompts and 2 characters" in line for line in small)
    assert "  1 no-project: its working directory is not on this machine" in done.stdout
    assert done.stderr == ""  # no progress bar in a pipe


def test_sweep_shows_a_progress_bar_on_a_terminal(project_dir, tmp_path):
    folder = _sessions(tmp_path, project_dir)
    run = on_terminal("sweep", "--source", str(folder), "--dry-run")
    assert run.exit_code == 0
    assert "sweeping sessions" in run.output and "100%" in run.output
    assert "2 live: modified in the last" in run.output


def test_vault_import_says_why_it_skipped(project_dir, tmp_path):
    folder = _sessions(tmp_path, project_dir)
    vault = tmp_path / "vault.db"
    first = piped("vault", "import", "--source", str(folder), "--path", str(vault))
    again = piped("vault", "import", "--source", str(folder), "--path", str(vault))
    assert first.returncode == 0 and again.returncode == 0, first.stderr + again.stderr
    assert "skipped: 5 unchanged" in again.stdout
    assert "  5 unchanged: already archived with the same files" in again.stdout


def test_vault_import_shows_a_progress_bar_on_a_terminal_only(project_dir, tmp_path):
    folder = _sessions(tmp_path, project_dir)
    vault = tmp_path / "vault.db"
    run = on_terminal("vault", "import", "--source", str(folder), "--path", str(vault))
    assert run.exit_code == 0, run.output
    assert "archiving sessions" in run.output and "100%" in run.output
    again = piped("vault", "import", "--source", str(folder), "--path", str(vault))
    assert again.returncode == 0 and "archiving sessions" not in again.stderr
