"""Every test runs with a private HOME, XDG dirs and working directory, so nothing a developer
has configured (overlays, keys, config files) can change a result, and nothing leaks out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_TESTDATA = REPO_ROOT.parent / "shared" / "testdata"


@pytest.fixture(autouse=True)
def isolated_environment(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("home")
    project = tmp_path_factory.mktemp("project")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    for name in [name for name in os.environ if name.startswith("CAPY_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(project)
    from capy.rules import ruleset

    ruleset._load_cached.cache_clear()
    yield project
    ruleset._load_cached.cache_clear()


@pytest.fixture(scope="session")
def rules_cache_file(tmp_path_factory) -> Path:
    """The shipped packs validated once; each test gets a copy of the cache file, as if an
    earlier command had validated them (a full validation per test would take a second)."""
    home = tmp_path_factory.mktemp("rules-home")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HOME", str(home))
        env.setenv("XDG_DATA_HOME", str(home / "data"))
        env.setenv("XDG_CONFIG_HOME", str(home / "config"))
        from capy.rules import ruleset

        ruleset._load_cached.cache_clear()
        ruleset._shipped_files_cached.cache_clear()  # parsed again, so its disk cache is written
        ruleset.load_rules(home)
        ruleset._load_cached.cache_clear()
    [cached] = (home / "data" / "capy" / "cache" / "rules").glob("*.json")
    return cached


def _copy_validated_packs(rules_cache_file: Path) -> Path:
    """Both caches an earlier command leaves: the compiled rules and the shipped packs parsed
    (which a process reads back when an overlay makes the compiled rules miss)."""
    import shutil

    from capy.config.paths import data_dir

    target = data_dir() / "cache"
    for source in (
        rules_cache_file,
        *(rules_cache_file.parent.parent / "rules-shipped").glob("*.json"),
    ):
        folder = target / source.parent.name
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, folder / source.name)
    return target / "rules"


@pytest.fixture
def warm_project(isolated_environment, rules_cache_file) -> Path:
    """A project (a `.git` folder marks its root) whose shipped packs were validated once, as
    after any earlier command."""
    (isolated_environment / ".git").mkdir()
    _copy_validated_packs(rules_cache_file)
    return isolated_environment


@pytest.fixture
def project_dir(isolated_environment) -> Path:
    return isolated_environment


@pytest.fixture
def user_rules_dir(isolated_environment) -> Path:
    from capy.config.paths import user_rules_dir

    path = user_rules_dir()
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def project_rules_dir(project_dir) -> Path:
    path = project_dir / ".capy" / "rules"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture
def shared_testdata():
    """Find a path under ../shared/testdata, or skip saying why the test cannot run."""

    def find(*parts: str) -> Path:
        path = SHARED_TESTDATA.joinpath(*parts)
        if not path.exists():
            pytest.skip(
                f"shared test data not found at ../shared/testdata/{'/'.join(parts)}; "
                "it sits beside the repository in CI and development checkouts"
            )
        return path

    return find


@pytest.fixture
def warm_rules(isolated_environment, rules_cache_file) -> Path:
    """The validated-packs cache in this test's data dir, so a capy subprocess starts warm."""
    return _copy_validated_packs(rules_cache_file)
