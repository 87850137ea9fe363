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


# Pages whose `capy ...` commands must be real: every command path exists and every option
# given to it is one it takes. A span such as `capy stats / doctor / which` lists several.
COMMAND_PAGES = (README, README.parent / "docs" / "troubleshooting.md")
_INLINE = re.compile(r"`(capy [^`]+)`")
_FENCED_LINE = re.compile(r"^\s*(?:\|\s*)?(capy [^#\n]+)", re.MULTILINE)


def _documented_commands(page: Path) -> list[str]:
    text = page.read_text(encoding="utf-8")
    fenced = "\n".join(re.findall(r"```sh\n(.*?)```", text, re.DOTALL))
    found = _INLINE.findall(re.sub(r"```.*?```", "", text, flags=re.DOTALL))
    found += _FENCED_LINE.findall(fenced)
    commands = []
    for span in found:
        for part in re.split(r"\s*(?:&&|\||>|;)\s*", span):
            if part.startswith("capy "):
                commands += _alternatives(part.strip())
    return commands


def _alternatives(command: str) -> list[str]:
    """`capy stats / doctor / which` as three commands; `capy bench a|b` was split already."""
    words = command.split()
    if "/" not in words:
        return [command]
    names = [word for word in words[1:] if word != "/"]
    return [f"capy {name}" for name in names]


def _problem(command: str) -> str | None:
    import shlex

    from capy.cli import app

    try:
        words = shlex.split(command)[1:]
    except ValueError:
        words = command.split()[1:]
    if words[:1] and words[0] in {"--version", "-V", "--help", "-h"}:
        return None  # capy's own meta flags, answered before any command is parsed
    chain, apps, rest = app.parse_commands(words)
    if not chain:
        return f"{command}: no such command"
    known = {
        name for argument in apps[-1].assemble_argument_collection() for name in argument.names
    }
    known |= {"--help", "-h", "--version"}
    unknown = [
        word.split("=", 1)[0]
        for word in rest
        if word.startswith("-") and word.split("=", 1)[0] not in known and word != "-"
    ]
    return f"{command}: {' '.join(chain)} takes no {', '.join(unknown)}" if unknown else None


def test_every_documented_command_and_option_exists():
    problems = []
    for page in COMMAND_PAGES:
        commands = _documented_commands(page)
        assert commands, f"no capy commands found in {page.name}"
        problems += [f"{page.name}: {p}" for c in commands if (p := _problem(c))]
    assert not problems, "\n".join(problems)


def test_the_troubleshooting_page_answers_each_question_and_the_readme_links_it():
    page = (README.parent / "docs" / "troubleshooting.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", page, re.MULTILINE)
    assert headings == [
        "No capy tools in my agent",
        "A hook errors on every call",
        "Codex shows nothing",
        "A project's overlay has no effect",
        "How do I reset my keys",
        "What leaves my machine",
    ]
    assert "(docs/troubleshooting.md)" in README.read_text(encoding="utf-8")
