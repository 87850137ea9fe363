"""A warm `capy search` / `capy stats` (capy.cli.warm): the same output and redaction as the full
CLI, no pydantic once warm, and never a stale answer: an edited pack, config or trust decision
is seen by the very next command. Real `capy` processes on a real encrypted store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_search_stats_imports import capy, full_cli, imported

# The secrets pack's own (visibly fake) example for the classic GitHub token.
SECRET = "ghp_" + "a1B2c3D4e5F6g7H8j9K0a1B2c3D4e5F6g7H8"
SEARCHES = (["search", "retention policy"], ["search", f"retention {SECRET}"], ["stats"])


@pytest.fixture
def indexed(warm_project: Path) -> Path:
    texts = ("The retention policy keeps durable sources.\n", "A retention note, second.\n")
    for number, text in enumerate(texts):
        done = capy(warm_project, "index", "-", "--source", f"notes-{number}", stdin=text)
        assert done.returncode == 0, done.stderr
    return warm_project


def entries() -> list[Path]:
    from capy.watched import cache_dir

    return sorted(Path(cache_dir("cli")).glob("warm-*.json"))


def same_as_full_cli(project: Path, arguments: list[str]) -> str:
    warm, full = capy(project, *arguments), full_cli(project, *arguments)
    assert (warm.returncode, warm.stdout, warm.stderr) == (
        full.returncode,
        full.stdout,
        full.stderr,
    )
    return warm.stdout


@pytest.mark.parametrize("arguments", SEARCHES)
def test_warm_output_and_redaction_are_the_full_clis(indexed: Path, arguments) -> None:
    capy(indexed, *arguments)  # writes the entry
    assert entries()
    assert not {name.split(".")[0] for name in imported(indexed, *arguments)} & {
        "pydantic",
        "pydantic_settings",
        "pydantic_core",
    }
    shown = same_as_full_cli(indexed, arguments)
    assert SECRET not in shown
    if SECRET in " ".join(arguments):
        assert "[REDACTED:" in shown


def test_an_edited_overlay_is_seen_by_the_next_command(indexed: Path, user_rules_dir) -> None:
    arguments = ["search", "retention"]
    capy(indexed, *arguments)
    assert same_as_full_cli(indexed, arguments).startswith("'retention': 2 hits\n")
    (user_rules_dir / "team.yaml").write_text(
        "pack: team\nschema: overlay.v1\nversion: 1.0.0\n"
        "description: One result per search, for the warm-start test.\n"
        'requires: ">=0.1"\nextends: search\npatch:\n  limits:\n    default_results: 1\n',
        encoding="utf-8",
    )
    assert same_as_full_cli(indexed, arguments).startswith("'retention': 1 hit\n")


def test_an_edited_config_is_seen_by_the_next_command(indexed: Path) -> None:
    from capy.config.paths import user_config_file

    arguments = ["search", f"retention {SECRET}"]
    capy(indexed, *arguments)
    assert SECRET not in same_as_full_cli(indexed, arguments)
    config = user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[redaction]\nreplies = false\n", encoding="utf-8")
    done = capy(indexed, *arguments)
    assert SECRET in done.stdout and "NOT redacted" in done.stderr
    assert SECRET in same_as_full_cli(indexed, arguments)


def test_an_untrusted_project_overlay_still_cannot_loosen(indexed: Path) -> None:
    # A project overlay that disables the detector redacting the query: ignored, and said so,
    # warm or not, since the project is not trusted.
    rules = indexed / ".capy" / "rules"
    rules.mkdir(parents=True)
    (rules / "loose.yaml").write_text(
        "pack: loose\nschema: overlay.v1\nversion: 1.0.0\n"
        "description: Tries to switch off a secret detector.\n"
        'requires: ">=0.1"\nextends: secrets\ndisable: [secrets.github-pat]\n',
        encoding="utf-8",
    )
    arguments = ["search", f"retention {SECRET}"]
    first = capy(indexed, *arguments)
    assert "capy ignored project overlay" in first.stderr
    shown = same_as_full_cli(indexed, arguments)
    assert SECRET not in shown and "[REDACTED:" in shown


def test_a_key_from_a_config_file_is_never_cached(indexed: Path) -> None:
    from capy.config.paths import user_config_file

    config = user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    key = "ab" * 32
    config.write_text(f'db_key = "{key}"\n', encoding="utf-8")
    for entry in entries():
        entry.unlink()
    environ = {name: value for name, value in os.environ.items() if name != "CAPY_DB_KEY"}
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from capy.entry import run; sys.exit(run())", "stats"],
        capture_output=True,
        text=True,
        cwd=indexed,
        env=environ,
        timeout=120,
        check=False,
    )
    assert "Traceback" not in done.stderr  # the store was made with another key: one line
    assert not entries()


def test_a_damaged_entry_is_rebuilt(indexed: Path) -> None:
    arguments = ["stats"]
    first = capy(indexed, *arguments).stdout
    for entry in entries():
        entry.write_text(json.dumps({"format": 1, "inputs": [], "values": 7}), encoding="utf-8")
    assert capy(indexed, *arguments).stdout == first
