"""`capy doctor` on a fresh home, on a working setup, and on broken ones."""

from __future__ import annotations

import json
import os
import re

import pytest

from capy.cli import main
from capy.doctor import Status, run_doctor


def by_name(report) -> dict[str, object]:
    return {check.name: check for check in report.checks}


def test_fresh_home_has_no_failures(doctor_home, snapshot) -> None:
    report = run_doctor(doctor_home.project)
    assert not report.failed
    checks = by_name(report)
    assert checks["SQLCipher and FTS5"].status is Status.OK
    assert checks["registration"].status is Status.WARN
    assert doctor_home.normalise(report.to_markdown()) == snapshot


def test_broken_key_permissions_and_overlay_fail(doctor_home, capsys, snapshot) -> None:
    from capy.config.paths import config_dir

    key = config_dir() / "db.key"
    key.parent.mkdir(parents=True)
    key.write_text("ab" * 32 + "\n")
    os.chmod(key, 0o644)
    overlay = doctor_home.project / ".capy" / "rules" / "mine.yaml"
    overlay.parent.mkdir(parents=True)
    overlay.write_text(
        "pack: mine\nschema: overlay.v1\nversion: 1.0.0\n"
        "description: My own tweaks to the search pack.\n"
        'requires: ">=0.1"\nextends: search\ndisable: [search.no-such-rule]\n'
    )
    assert main(["doctor"]) == 1
    out, err = capsys.readouterr()
    assert err == ""
    report = run_doctor(doctor_home.project)
    assert report.count(Status.FAIL) == 2
    checks = by_name(report)
    assert checks["db key"].status is Status.FAIL
    assert checks["rule packs"].status is Status.FAIL
    assert checks["runtime python"].status is Status.OK  # later checks still ran
    assert doctor_home.normalise(report.to_markdown()) == snapshot
    # Off a terminal the command prints plain tables: one row a check, its fix below it.
    lines = out.splitlines()
    assert lines[0] == "# capy doctor" and "Environment" in lines
    failing = next(index for index, line in enumerate(lines) if re.match(r"FAIL +db key +", line))
    assert re.match(r" +fix: ", lines[failing + 1])
    assert not any(character in out for character in "│┃━─")  # no box drawing in a pipe
    assert lines[-1].startswith("**Summary:** ") and lines[-1].endswith(" 2 failures")


def test_a_healthy_knowledge_base_and_registration(doctor_home) -> None:
    from capy.store import open_store
    from capy.store.indexing import index_content

    with open_store(doctor_home.project) as store:
        index_content(store, "# Notes\n\nThe deploy key rotates weekly.\n", label="notes.md")
    assert main(["setup", "--platform", "claude-code"]) == 0
    checks = by_name(run_doctor(doctor_home.project))
    base = checks["knowledge base"]
    assert base.status is Status.OK
    assert "quick_check ok, 1 source, " in base.detail
    assert checks["Claude Code"].status is Status.OK
    assert checks["Claude Code"].detail.startswith(
        "MCP in ~/.claude.json; hooks for 9 of 9 events in .claude/settings.local.json"
    )
    assert checks["db key"].detail.endswith("(mode 600)")


@pytest.mark.parametrize(
    ("name", "advice"),
    [
        ("vault", "rotate it with `capy vault rekey --rotate`"),
        ("capsules", "capy cannot rotate the capsules key"),
    ],
)
def test_every_key_file_is_checked_with_its_own_advice(doctor_home, name, advice) -> None:
    """The capsule log's key file is a key file too, and only the knowledge base's key is
    rotated by `capy encrypt --rotate`."""
    from capy.config.paths import config_dir

    key = config_dir() / f"{name}.key"
    key.parent.mkdir(parents=True)
    key.write_text("ab" * 32 + "\n")
    os.chmod(key, 0o644)
    check = by_name(run_doctor(doctor_home.project))[f"{name} key"]
    assert check.status is Status.FAIL
    assert advice in check.fix and "capy encrypt" not in check.fix


def test_a_wrong_key_fails_without_touching_the_database(doctor_home, monkeypatch) -> None:
    from capy.store import open_store

    with open_store(doctor_home.project) as store:
        path = store.path
    before = path.read_bytes()
    monkeypatch.setenv("CAPY_DB_KEY", "cd" * 32)
    base = by_name(run_doctor(doctor_home.project))["knowledge base"]
    assert base.status is Status.FAIL
    assert "does not open with the configured key (CAPY_DB_KEY)" in base.detail
    assert path.read_bytes() == before
    assert [p.name for p in path.parent.iterdir() if "corrupt" in p.name] == []


def test_hooks_in_both_scopes_are_flagged(doctor_home) -> None:
    assert main(["setup", "--platform", "cursor", "--shared"]) == 0
    assert main(["setup", "--platform", "cursor", "--global"]) == 0
    cursor = by_name(run_doctor(doctor_home.project))["Cursor"]
    assert cursor.status is Status.WARN
    assert "registered in more than one file, so capy runs twice" in cursor.detail


def test_a_malformed_agent_file_is_a_warning_naming_it(doctor_home) -> None:
    settings = doctor_home.project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text("{not json")
    gemini = by_name(run_doctor(doctor_home.project))["Gemini CLI"]
    assert gemini.status is Status.WARN
    assert ".gemini/settings.json is not valid JSON" in gemini.detail


def test_broken_config_is_reported_and_every_other_check_runs(doctor_home) -> None:
    (doctor_home.project / ".capy.toml").write_text("log_level = [\n")
    report = run_doctor(doctor_home.project)
    checks = by_name(report)
    assert checks["config"].status is Status.FAIL
    assert ".capy.toml" in checks["config"].detail
    assert {"SQLCipher and FTS5", "runtime python", "permission policies"} <= set(checks)
    assert checks["knowledge base"].status is Status.WARN
    assert checks["knowledge base"].detail.startswith("not checked: capy's config does not load")
    assert report.count(Status.FAIL) == 1


def test_policies_name_the_settings_files_read(doctor_home) -> None:
    settings = doctor_home.project / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"permissions": {"deny": ["Bash(rm:*)"], "ask": ["Read"]}}))
    policies = by_name(run_doctor(doctor_home.project))["permission policies"]
    assert policies.status is Status.OK
    assert "settings files with rules: .claude/settings.local.json (2 rules)" in policies.detail


@pytest.mark.parametrize("argv", [["doctor", "--json"]])
def test_json_carries_the_same_checks(doctor_home, capsys, argv) -> None:
    assert main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    report = run_doctor(doctor_home.project)
    assert data["ok"] is True
    assert [check["name"] for check in data["checks"]] == [c.name for c in report.checks]
    assert data["summary"] == {
        "ok": report.count(Status.OK),
        "warn": report.count(Status.WARN),
        "fail": 0,
    }


def _isolated_here() -> bool:
    from capy.executor import isolation
    from capy.rules import build_ruleset

    return (
        isolation.plan(build_ruleset(include_shipped=True).view("executor").isolation) is not None
    )


def test_a_data_folder_inside_the_config_folder_keeps_calls_isolated(
    doctor_home, monkeypatch
) -> None:
    """The data folder nested in the config folder once failed the namespace trial, and the
    doctor blamed the kernel; the outer empty mount hides it."""
    from capy.config.paths import config_dir

    if not _isolated_here():
        pytest.skip("calls are not isolated on this machine")
    monkeypatch.setenv("CAPY_DATA_DIR", str(config_dir() / "data"))
    check = by_name(run_doctor(doctor_home.project))["sandbox isolation"]
    assert check.status is Status.OK, check.detail
    assert "cannot read capy's key files or stores directly" in check.detail
    assert "including capy's own installation" in check.detail


def test_a_data_folder_holding_the_working_folder_is_a_warning_naming_it(
    doctor_home, monkeypatch, tmp_path
) -> None:
    if not _isolated_here():
        pytest.skip("calls are not isolated on this machine")
    data = tmp_path / "data"
    (data / "work").mkdir(parents=True)
    monkeypatch.setenv("CAPY_DATA_DIR", str(data))
    monkeypatch.chdir(data / "work")
    check = by_name(run_doctor(doctor_home.project))["sandbox isolation"]
    assert check.status is Status.WARN
    assert (
        f"data dir {data.resolve()} stays in sight of calls: it holds the working" in check.detail
    )


def test_the_isolation_check_says_whether_calls_have_their_own_temp_folders(
    doctor_home, monkeypatch
) -> None:
    """Each call's own /tmp keeps its script out of other calls' reach; a pack that names no
    such folder shares them again, and the doctor says what that allows."""
    from capy.bench.hostile_reach_tmp import SHARED_TMP_OVERLAY
    from capy.config.paths import user_rules_dir

    if not _isolated_here():
        pytest.skip("calls are not isolated on this machine")
    check = by_name(run_doctor(doctor_home.project))["sandbox isolation"]
    assert check.status is Status.OK, check.detail
    assert (
        "its own empty temp folders (/tmp" in check.detail
        or "it reads the machine's files in /tmp, /var/tmp (an overlay), but what it writes "
        "there stays its own"
        in check.detail
    )
    assert "no other call can see or change its script" in check.detail
    user_rules_dir().mkdir(parents=True)
    (user_rules_dir() / "shared-tmp.yaml").write_text(SHARED_TMP_OVERLAY)
    from capy.rules import ruleset

    ruleset._load_cached.cache_clear()
    check = by_name(run_doctor(doctor_home.project))["sandbox isolation"]
    assert check.status is Status.WARN, check.detail
    assert "can rewrite a later call's script before it runs" in check.detail
    assert "no other call can see" not in check.detail


EMPTY_TMP_OVERLAY = """\
pack: empty-tmp
schema: overlay.v1
version: 1.0.0
description: Each call's temp folders start empty.
requires: ">=0.1"
extends: executor
patch:
  isolation:
    private_tmp:
      mode: empty
"""


def test_the_isolation_check_says_which_temp_folders_calls_get(doctor_home) -> None:
    """Overlays showing the machine's files where the kernel allows them, empty folders where
    the pack asks for them: the doctor says which calls get."""
    from capy.config.paths import user_rules_dir
    from capy.executor import isolation
    from capy.rules import ruleset

    if not _isolated_here():
        pytest.skip("calls are not isolated on this machine")
    check = by_name(run_doctor(doctor_home.project))["sandbox isolation"]
    rules = ruleset.build_ruleset(include_shipped=True).view("executor").isolation
    if isolation.temp_mode(rules) == "overlay":
        assert "it reads the machine's files in /tmp, /var/tmp (an overlay)" in check.detail
    else:
        assert "which this kernel refused" in check.detail
    user_rules_dir().mkdir(parents=True)
    (user_rules_dir() / "empty-tmp.yaml").write_text(EMPTY_TMP_OVERLAY)
    ruleset._load_cached.cache_clear()
    check = by_name(run_doctor(doctor_home.project))["sandbox isolation"]
    assert "its own empty temp folders (/tmp, /var/tmp, /dev/shm), gone" in check.detail
    assert "overlay" not in check.detail
