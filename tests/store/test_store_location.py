"""Where the database lives: per-project default, configured paths, linked git worktrees."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from capy.config import load_settings
from capy.store import locate_store, resolve_db_path
from capy.store.location import project_hash


def git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def test_default_path_is_per_project_under_data_dir(env) -> None:
    location = locate_store()
    root = env.project.resolve()
    assert location.project_root == root
    expected = env.home / ".local" / "share" / "capy" / project_hash(root) / "knowledge.db"
    assert location.path == expected
    assert location.key_source.label == f"key file {env.key_file}"


def test_relative_configured_path_resolves_against_project_root(env, monkeypatch) -> None:
    (env.project / ".git").mkdir()
    nested = env.project / "src" / "deep"
    nested.mkdir(parents=True)
    monkeypatch.chdir(nested)
    monkeypatch.setenv("CAPY_DB_PATH", "var/kb.db")
    assert locate_store().path == env.project.resolve() / "var" / "kb.db"
    settings = load_settings(nested).settings
    assert resolve_db_path(nested, settings) == env.project.resolve() / "var" / "kb.db"


def test_db_option_is_relative_to_the_current_directory(env, monkeypatch) -> None:
    (env.project / ".git").mkdir()
    nested = env.project / "sub"
    nested.mkdir()
    monkeypatch.chdir(nested)
    assert locate_store(db_path=Path("here.db")).path == nested.resolve() / "here.db"


def test_key_from_user_config_is_named_by_its_file(env, monkeypatch) -> None:
    config = env.home / ".config" / "capy" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('db_key = "' + "b2" * 32 + '"\n')
    assert locate_store().key_source.label == f"db_key in {config}"
    monkeypatch.setenv("CAPY_DB_KEY", "c3" * 32)
    assert locate_store().key_source.label == "CAPY_DB_KEY"


def test_linked_worktree_shares_the_main_worktree_database(env, tmp_path) -> None:
    main = tmp_path / "repo"
    main.mkdir()
    git("init", "-q", "-b", "main", cwd=main)
    (main / "README").write_text("hi\n")
    git("add", "README", cwd=main)
    git("commit", "-q", "-m", "init", cwd=main)
    linked = tmp_path / "linked"
    git("worktree", "add", "-q", "-b", "feature", str(linked), cwd=main)
    assert (linked / ".git").is_file()
    from_main = locate_store(main)
    from_linked = locate_store(linked / ".")
    assert from_linked.project_root == main.resolve()
    assert from_linked.path == from_main.path


@pytest.mark.parametrize("name", ["a", "b"])
def test_different_projects_get_different_files(env, tmp_path, name) -> None:
    other = tmp_path / name
    (other / ".git").mkdir(parents=True)
    assert locate_store(other).path != locate_store(env.project).path
