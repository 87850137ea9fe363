from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from capy.config import paths


def test_config_and_data_dirs_follow_xdg(tmp_path: Path) -> None:
    environ = {"HOME": "/home/u", "XDG_CONFIG_HOME": str(tmp_path / "c"), "XDG_DATA_HOME": "/d"}
    assert paths.config_dir(environ) == tmp_path / "c" / "capy"
    assert paths.data_dir(environ) == Path("/d/capy")
    assert paths.user_rules_dir(environ) == tmp_path / "c" / "capy" / "rules"


def test_dirs_fall_back_to_home_and_ignore_relative_xdg() -> None:
    environ = {"HOME": "/home/u", "XDG_CONFIG_HOME": "relative/conf", "XDG_DATA_HOME": ""}
    assert paths.config_dir(environ) == Path("/home/u/.config/capy")
    assert paths.data_dir(environ) == Path("/home/u/.local/share/capy")
    assert paths.user_config_file(environ) == Path("/home/u/.config/capy/config.toml")


def test_project_rules_dir() -> None:
    assert paths.project_rules_dir(Path("/p")) == Path("/p/.capy/rules")


@pytest.mark.parametrize("marker", [".git", ".capy"])
def test_project_root_is_nearest_marked_ancestor(tmp_path: Path, marker: str) -> None:
    (tmp_path / "repo" / marker).mkdir(parents=True)
    deep = tmp_path / "repo" / "src" / "pkg"
    deep.mkdir(parents=True)
    assert paths.project_root(deep) == (tmp_path / "repo").resolve()


def test_nested_capy_dir_wins_over_outer_git(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "sub" / ".capy").mkdir(parents=True)
    assert paths.project_root(tmp_path / "sub") == (tmp_path / "sub").resolve()


def test_project_root_without_markers_is_start(tmp_path: Path) -> None:
    start = tmp_path / "a" / "b"
    start.mkdir(parents=True)
    if any(
        (parent / marker).exists() for parent in start.parents for marker in paths.PROJECT_MARKERS
    ):
        pytest.skip("the temporary directory itself lies inside a project")
    assert paths.project_root(start) == start.resolve()


def test_git_file_without_commondir_is_its_own_root(tmp_path: Path) -> None:
    # A submodule checkout: `.git` is a file pointing into the superproject's modules dir.
    modules = tmp_path / "super" / ".git" / "modules" / "sub"
    modules.mkdir(parents=True)
    sub = tmp_path / "super" / "sub"
    sub.mkdir()
    (sub / ".git").write_text("gitdir: ../.git/modules/sub\n", encoding="utf-8")
    assert paths.project_root(sub) == sub.resolve()


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_linked_worktree_resolves_to_main_worktree(tmp_path: Path) -> None:
    main = tmp_path / "main"
    main.mkdir()
    identity = ["-c", "user.name=capy", "-c", "user.email=capy@example.invalid"]

    # Variables such as GIT_DIR (set when tests run from a git hook) would redirect every command.
    env = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}

    def git(*args: str) -> None:
        subprocess.run(
            ["git", *identity, *args], cwd=main, env=env, check=True, capture_output=True
        )

    git("init", "-q")
    git("commit", "-q", "--allow-empty", "-m", "init")
    linked = tmp_path / "elsewhere" / "feature"
    git("worktree", "add", "-q", "-b", "feature", str(linked))

    assert (linked / ".git").is_file()
    (linked / "src").mkdir()
    assert paths.project_root(linked) == main.resolve()
    assert paths.project_root(linked / "src") == main.resolve()
    assert paths.project_root(main) == main.resolve()


def test_package_exports_resolve() -> None:
    import capy.config

    assert set(capy.config.__all__) == set(capy.config._HOMES)
    for name in capy.config.__all__:
        assert getattr(capy.config, name) is not None
    with pytest.raises(AttributeError):
        _ = capy.config.no_such_name
