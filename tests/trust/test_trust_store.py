"""The trusted-projects file: what it fingerprints, and what a damaged one does (trusts nothing,
says so in one line, and is replaced by the next `capy trust`)."""

from __future__ import annotations

import pytest

from capy.cli import main
from capy.trust.store import fingerprint, is_trusted, store_path, trusted_projects


def test_the_fingerprint_covers_names_contents_and_every_project_file(project_dir, ship):
    first = fingerprint(project_dir)
    overlay = ship("a.yaml", "chunking", "patch:\n  max_chunk_bytes: 2048\n")
    with_overlay = fingerprint(project_dir)
    assert with_overlay != first
    overlay.rename(overlay.with_name("b.yaml"))
    assert fingerprint(project_dir) != with_overlay  # same bytes, another name
    (project_dir / ".capy" / "config.toml").write_text("")
    renamed = fingerprint(project_dir)
    (project_dir / ".capy.toml").write_text("")
    every_file = fingerprint(project_dir)
    assert every_file != renamed
    # Files that are not overlays or config do not count: editing the code keeps the trust.
    (project_dir / ".capy" / "rules" / "README.md").write_text("notes")
    (project_dir / "main.py").write_text("print('hi')\n")
    assert fingerprint(project_dir) == every_file


@pytest.mark.parametrize("damage", ["{not json", '{"projects": 3}', "[]", "\x00\xff"])
def test_a_damaged_store_trusts_nothing_and_the_next_trust_replaces_it(
    project_dir, ship, capsys, damage
):
    ship("a.yaml", "secrets", "disable: [secrets.github-pat]\n")
    assert main(["trust"]) == 0
    assert is_trusted(project_dir.resolve())
    store_path().write_bytes(damage.encode("utf-8", "surrogateescape"))
    assert not is_trusted(project_dir.resolve())
    capsys.readouterr()
    assert main(["trust", "--list"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"capy: {store_path()}: ") and "Traceback" not in err
    assert err.count("\n") == 1
    assert main(["trust"]) == 0
    assert [entry.root for entry in trusted_projects()] == [str(project_dir.resolve())]


def test_trusting_a_folder_without_project_files_says_there_is_nothing_to_trust(
    project_dir, capsys
):
    assert main(["trust"]) == 1
    assert "has no .capy/rules/*.yaml, .capy/config.toml or .capy.toml" in capsys.readouterr().err
    assert not store_path().exists()


def test_trust_list_says_when_the_files_changed(project_dir, ship, capsys):
    overlay = ship("a.yaml", "chunking", "patch:\n  max_chunk_bytes: 2048\n")
    assert main(["trust", "--list"]) == 0
    assert "no trusted projects" in capsys.readouterr().out
    assert main(["trust"]) == 0
    overlay.write_text(overlay.read_text() + "# changed\n")
    capsys.readouterr()
    assert main(["trust", "--list"]) == 0
    assert "files changed since, trust dropped" in capsys.readouterr().out
