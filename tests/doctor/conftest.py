"""A fresh home and project for the doctor, with PATH reduced to a known set of runtimes so
that what the report says about them does not depend on the machine."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class DoctorHome:
    project: Path
    home: Path

    def normalise(self, text: str) -> str:
        """Replace what varies between machines and runs with stable placeholders."""
        text = text.replace(str(self.project), "<PROJECT>").replace(str(self.home), "<HOME>")
        text = text.replace(sys.executable, "<PYTHON>")
        text = re.sub(r"capy [\w.+-]+ on Python [\d.]+", "capy <V> on Python <V>", text)
        text = re.sub(r"SQLCipher \d[^()]* \(SQLite [\d.]+\)", "SQLCipher <V> (SQLite <V>)", text)
        text = re.sub(r"\b[0-9a-f]{16}\b", "<HASH>", text)
        text = re.sub(r"\d+(\.\d+)? (B|KiB|MiB) with its WAL", "<SIZE> with its WAL", text)
        text = re.sub(r"/[^\s()]*/bin/(python3|bash|sh)\b", r"<BIN>/\1", text)
        # Counts that grow whenever a pack gains a language, a pack or a policy.
        text = re.sub(r"\d+ (packs valid|built-in policies)", r"<N> \1", text)
        text = re.sub(r"\*\*Summary:\*\* .*", "**Summary:** <counts>", text)
        # On with the semantic extra installed, off without: tests/doctor/test_doctor_semantic.py
        # checks each state's wording, so the report reads the same on both kinds of machine.
        text = re.sub(r"(semantic search:) (on|off)\b.*", r"\1 <on or off>", text)
        # Whether the kernel gives namespaces depends on the machine: test_isolation_check words.
        text = re.sub(
            r"\*\*\w+\*\* sandbox isolation: .*(\n  - fix: .*)?",
            "**<status>** sandbox isolation: <machine>",
            text,
        )
        return _only_known_runtimes(text)


def _only_known_runtimes(text: str) -> str:
    """Keep the runtime lines of python and shell (on the test's PATH) and one missing one."""
    kept = []
    skipping = False
    for line in text.splitlines(keepends=True):
        match = re.match(r"- \*\*\w+\*\* runtime (\w+):", line)
        if match:
            skipping = match.group(1) not in ("python", "shell", "ruby")
        elif not line.startswith("  - fix:"):
            skipping = False
        if not skipping:
            kept.append(line)
    return "".join(kept)


@pytest.fixture
def doctor_home(project_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> DoctorHome:
    (project_dir / ".git").mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, target in (("python3", sys.executable), ("bash", "/bin/bash"), ("sh", "/bin/sh")):
        if Path(target).exists():
            (bin_dir / name).symlink_to(target)
    monkeypatch.setenv("PATH", str(bin_dir))
    from capy.executor.runtimes import clear_cache

    clear_cache()
    return DoctorHome(project_dir.resolve(), Path(os.environ["HOME"]).resolve())
