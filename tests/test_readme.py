"""The README's examples are real: its overlay validates and its Quick start names real commands."""

from __future__ import annotations

import re
from pathlib import Path

from capy.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def test_readme_overlay_example_validates(project_dir, capsys):
    (overlay,) = _blocks("yaml")
    path = project_dir / "example.yaml"
    path.write_text(overlay, encoding="utf-8")
    assert main(["rules", "validate", "example.yaml"]) == 0, capsys.readouterr().out


def test_quick_start_has_exactly_two_commands_and_ci_runs_the_second():
    quick_start = (
        README.read_text(encoding="utf-8").split("## Quick start", 1)[1].split("\n## ", 1)[0]
    )
    commands = re.findall(r"```sh\n(.*?)\n```", quick_start, re.DOTALL)
    assert len(commands) == 2
    ci_script = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[1] in ci_script.splitlines()
