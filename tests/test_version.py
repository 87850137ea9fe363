"""`capy --version`'s commit: read from real git checkouts, and baked into a real wheel."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from capy import __version__
from capy.version import checkout_commit

REPO = Path(__file__).resolve().parents[1]


def git(cwd: Path, *arguments: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q", "-b", "trunk")
    (main / "a.txt").write_text("a\n", encoding="utf-8")
    git(main, "add", "a.txt")
    git(main, "commit", "-q", "-m", "first")
    return main


def test_a_branch_a_detached_head_and_packed_refs(repository: Path) -> None:
    head = git(repository, "rev-parse", "HEAD")
    assert checkout_commit(str(repository)) == head
    git(repository, "pack-refs", "--all")  # the loose ref is gone; packed-refs holds it
    assert not (repository / ".git" / "refs" / "heads" / "trunk").exists()
    assert checkout_commit(str(repository)) == head
    git(repository, "checkout", "-q", "--detach")
    assert checkout_commit(str(repository)) == head


def test_a_linked_worktree_reads_its_own_head(repository: Path, tmp_path: Path) -> None:
    linked = tmp_path / "linked"
    git(repository, "worktree", "add", "-q", "-b", "side", str(linked))
    (linked / "b.txt").write_text("b\n", encoding="utf-8")
    git(linked, "add", "b.txt")
    git(linked, "commit", "-q", "-m", "second")
    assert checkout_commit(str(linked)) == git(linked, "rev-parse", "HEAD")
    assert checkout_commit(str(repository)) == git(repository, "rev-parse", "HEAD")
    assert checkout_commit(str(linked)) != checkout_commit(str(repository))


def test_not_a_checkout_has_no_commit(tmp_path: Path) -> None:
    assert checkout_commit(str(tmp_path)) is None
    (tmp_path / ".git").write_text("gitdir: nowhere\n", encoding="utf-8")
    assert checkout_commit(str(tmp_path)) is None


@pytest.mark.slow
def test_a_wheel_carries_the_commit_it_was_built_from(tmp_path: Path) -> None:
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    if not head:
        pytest.skip("the source tree is not a git checkout")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if built.returncode != 0:
        pytest.skip(f"no wheel could be built here (hatchling unreachable?): {built.stderr[-300:]}")
    [wheel] = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read("capy/_commit.txt").decode().strip() == head
        [metadata] = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
        assert f"Version: {__version__}" in archive.read(metadata).decode().splitlines()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "--no-deps", str(wheel)],
        check=True,
        timeout=300,
        capture_output=True,
    )
    # Installed away from any checkout, and without its dependencies: --version needs none.
    done = subprocess.run(
        [str(venv / "bin" / "capy"), "--version"], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.stdout == f"capy {__version__} (commit {head[:12]})\n"
