"""The console script's quick answers: `--version`, `--help`, `which`, `rules hash`.

Each is checked against what the full cyclopts CLI says, in real `capy` processes, and for the
modules it imports (deterministic, unlike a timing): none of the heavy ones.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from capy import __version__
from capy.cli import main

REPO = Path(__file__).resolve().parents[2]
# What a one-line answer must not pay for: each costs several bare Python starts or more.
HEAVY = ("cyclopts", "rich", "pydantic", "pydantic_settings", "ruamel", "jsonschema",
         "sqlcipher3", "mcp", "httpx", "textual")  # fmt: skip


ENTRY = "import sys; from capy.entry import run; sys.exit(run())"


def capy(*arguments: str, env: dict[str, str] | None = None, importtime: bool = False):
    command = [sys.executable, "-X", "importtime", "-c", ENTRY] if importtime else _capy_argv()
    return subprocess.run(
        [*command, *arguments],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=120,
        check=False,
    )


def imported(*arguments: str) -> set[str]:
    """Top-level names of every module a `capy ARGUMENTS` process imported."""
    done = capy(*arguments, importtime=True)
    assert done.returncode == 0, done.stderr[-2000:]
    names = re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*([\w.]+)$", done.stderr, re.M)
    return {name.split(".")[0] for name in names}


def full_cli(
    *arguments: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    code = f"import sys; from capy.cli import main; sys.exit(main({list(arguments)!r}))"
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd,
        timeout=120,
        check=False,
    )


@pytest.fixture
def warm_rules(warm_project) -> Path:
    return warm_project


def git_head() -> str | None:
    done = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() if done.returncode == 0 else None


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_names_capy_its_version_and_the_checkouts_commit(flag: str) -> None:
    done = capy(flag)
    assert done.returncode == 0 and done.stderr == ""
    head = git_head()
    if head is None:
        assert done.stdout == f"capy {__version__}\n"
    else:
        assert done.stdout == f"capy {__version__} (commit {head[:12]})\n"
    assert full_cli(flag).stdout == done.stdout  # the cyclopts app says the same


def test_an_answer_with_stdout_closed_is_no_error() -> None:
    """An agent or a script may start capy with fd 1 closed: nowhere to print is not a crash."""
    done = subprocess.run(
        [*_capy_argv(), "--version"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=lambda: os.close(1),
    )
    assert (done.returncode, done.stderr) == (0, "")


@pytest.mark.parametrize("columns", ["80", "52", "140", "30"])
def test_help_is_what_cyclopts_prints(columns: str) -> None:
    env = {"COLUMNS": columns}
    quick = capy("--help", env=env)
    assert quick.returncode == 0
    assert quick.stdout == full_cli("--help", env=env).stdout
    assert capy(env=env).stdout == quick.stdout  # bare `capy` shows the help too


def test_help_keeps_cyclopts_styles_when_colour_is_forced() -> None:
    env = {"COLUMNS": "80", "FORCE_COLOR": "1"}
    quick = capy("-h", env=env).stdout
    assert "\x1b[36m" in quick
    assert quick == full_cli("-h", env=env).stdout


@pytest.mark.parametrize("arguments", [["--version"], ["--help"]])
def test_constant_answers_import_nothing_heavy(arguments: list[str]) -> None:
    assert not imported(*arguments) & set(HEAVY)


@pytest.mark.parametrize("arguments", [["which"], ["rules", "hash"]])
def test_cached_answers_import_nothing_heavy_once_warm(warm_rules, arguments) -> None:
    first = capy(*arguments)
    assert first.returncode == 0, first.stderr
    assert not imported(*arguments) & set(HEAVY)
    assert capy(*arguments).stdout == first.stdout == full_cli(*arguments).stdout


def test_which_follows_the_config_and_the_environment(warm_rules, tmp_path: Path) -> None:
    from capy.config.paths import user_config_file

    default = capy("which").stdout
    assert default.strip().endswith("knowledge.db")
    config = user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'db_path = "{tmp_path / "configured.db"}"\n', encoding="utf-8")
    assert capy("which").stdout == f"{tmp_path / 'configured.db'}\n"
    env = {"CAPY_DB_PATH": str(tmp_path / "from-env.db")}
    assert capy("which", env=env).stdout == f"{tmp_path / 'from-env.db'}\n"
    config.unlink()
    assert capy("which").stdout == default


def test_rules_hash_follows_an_overlay_and_a_broken_one_is_an_error(
    warm_rules, user_rules_dir
) -> None:
    shipped = capy("rules", "hash").stdout
    overlay = user_rules_dir / "team.yaml"
    overlay.write_text(
        "pack: team\nschema: overlay.v1\nversion: 1.0.0\n"
        "description: Smaller chunks for the quick-answer test.\n"
        'requires: ">=0.1"\nextends: chunking\npatch:\n  max_chunk_bytes: 2048\n',
        encoding="utf-8",
    )
    changed = capy("rules", "hash")
    assert changed.returncode == 0 and changed.stdout != shipped
    assert changed.stdout == full_cli("rules", "hash").stdout
    overlay.write_text("pack: team\nschema: overlay.v1\nextends: [\n", encoding="utf-8")
    broken = capy("rules", "hash")
    assert broken.returncode == 1 and broken.stdout == ""
    assert "team.yaml" in broken.stderr and "Traceback" not in broken.stderr
    overlay.unlink()
    assert capy("rules", "hash").stdout == shipped


def test_a_broken_config_goes_to_the_full_cli_for_its_error(warm_rules) -> None:
    from capy.config.paths import user_config_file

    config = user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("db_path = [\n", encoding="utf-8")
    done = capy("which")
    assert done.returncode == 2 and done.stdout == ""
    assert "config.toml" in done.stderr and "Traceback" not in done.stderr


def test_main_always_runs_the_cyclopts_app(capsys) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith(f"capy {__version__}")


def test_a_damaged_cache_entry_is_rebuilt(warm_rules) -> None:
    from capy.watched import cache_dir

    first = capy("which").stdout
    entries = list(Path(cache_dir("cli")).glob("which-*.json"))
    assert entries
    for entry in entries:
        entry.write_text('{"format": 1, "line": 7}', encoding="utf-8")
    again = capy("which")
    assert (again.returncode, again.stdout) == (0, first)


def test_which_notices_a_new_project_marker_between_here_and_the_root(warm_rules) -> None:
    inner = warm_rules / "sub" / "dir"
    inner.mkdir(parents=True)
    here = subprocess.run
    before = here([*_capy_argv(), "which"], cwd=inner, capture_output=True, text=True).stdout
    assert before == capy("which").stdout  # the same project: .git is above
    (warm_rules / "sub" / ".capy").mkdir()  # sub/ is now a project of its own
    after = here([*_capy_argv(), "which"], cwd=inner, capture_output=True, text=True).stdout
    assert after != before
    assert after == full_cli("which", cwd=inner).stdout


def _capy_argv() -> list[str]:
    script = Path(sys.executable).with_name("capy")
    return [str(script)] if script.is_file() else [sys.executable, "-c", ENTRY]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ([], (None, None, False)),
        (["--db", "kb.db"], (None, "kb.db", False)),
        (["--db=kb.db", "--project", "/p", "--mcp-hooks"], ("/p", "kb.db", True)),
        (["--help"], None),
        (["--db"], None),
        (["--db", "--mcp-hooks"], None),
        (["--db", "a", "--db", "b"], None),
        (["--mcp-hooks", "--mcp-hooks"], None),
        (["--no-mcp-hooks"], None),
        (["extra"], None),
    ],
)
def test_serve_runs_without_the_app_only_as_agents_start_it(arguments, expected) -> None:
    # Anything else goes to the cyclopts app, which says what is wrong or prints the help.
    from capy.cli.quick import serve_options

    assert serve_options(arguments) == expected


def test_serve_help_is_still_the_apps() -> None:
    done = capy("serve", "--help")
    assert done.returncode == 0 and "--mcp-hooks" in done.stdout
