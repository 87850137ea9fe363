"""Learning from capsules with no LLM: error-then-fix rules, corrections and preferences, the
gate, repeats, failing fixes, the user's operations, and a rebuild from capsules alone."""

from __future__ import annotations

from memory_helpers import call, prompt, push_episode

from capy.memory import learn, records_of, write_operation

NOW = 1_777_939_200.0  # 2026-05-05: inside the decay grace of the capsules below


def _records(store):
    learn(store)
    return records_of(store, store.default_scope, now=NOW)


def test_an_error_then_a_related_success_is_a_rule_with_both_capsules(store):
    written = store.write(push_episode("s1", 1))
    [rule] = _records(store)
    assert rule["type"] == "rule" and rule["source"] == "error_fix"
    assert "`git push origin login-form` fails with" in rule["text"]
    assert "`git pull --rebase origin login-form` worked" in rule["text"]
    assert rule["provenance"] == [written[1].id, written[2].id]
    assert rule["status"] == "candidate" and rule["confidence"] == 0.45


def test_the_same_failure_fixed_again_in_another_session_raises_confidence(store):
    store.write(push_episode("s1", 1))
    store.write(push_episode("s2", 2))
    [rule] = _records(store)
    assert rule["sessions"] == ["s1", "s2"] and rule["confidence"] == 0.6


def test_a_fix_whose_error_comes_back_unfixed_is_demoted(store):
    store.write(push_episode("s1", 1))
    store.write(
        [
            call(
                "s3",
                "git push origin main",
                " ! [rejected] main -> main (non-fast-forward)",
                "2026-05-03T10:00:00Z",
                failed=True,
            )
        ]
    )
    [rule] = _records(store)
    assert rule["failures"] == 1 and rule["confidence"] < 0.45


def test_corrections_and_preferences_become_records_and_questions_do_not(store):
    store.write(
        [
            call("s1", "npm install zod", "added 1 package", "2026-05-01T10:00:00Z"),
            prompt("s1", "No, use pnpm here, npm breaks the lockfile.", "2026-05-01T10:00:01Z"),
            prompt("s1", "Never run `git push --force` on this repo.", "2026-05-01T10:00:02Z"),
            prompt("s1", "Does parse_date always return a list?", "2026-05-01T10:00:03Z"),
            prompt("s1", "don't worry about the flaky test for now", "2026-05-01T10:00:04Z"),
        ]
    )
    records = {record["type"]: record for record in _records(store)}
    assert set(records) == {"preference", "anti_pattern"}
    assert records["preference"]["context"] == "npm install zod"
    assert records["anti_pattern"]["block_class"] == "memory.block-git-force-push"


def test_a_typo_fix_and_an_interrupted_command_teach_nothing(store):
    at = "2026-05-01T10:00:0"
    store.write(
        [
            call("s1", "gti status", "bash: gti: command not found", at + "0Z", failed=True),
            call("s1", "git status", "On branch main", at + "1Z"),
            call("s1", "sleep 60", "Command interrupted by user", at + "2Z", failed=True),
            call("s1", "sleep 1", "", at + "3Z"),
        ]
    )
    assert _records(store) == []
    from capy.capsules.sqlite.memory import log_entries

    events = [entry[2] for entry in log_entries(store.conn, store.default_scope, 10)]
    assert events == ["rejected"]


def test_operations_add_edit_forget_and_feedback_replay_in_a_rebuild(store):
    store.write(push_episode("s1", 1))
    [rule] = _records(store)
    write_operation(
        store, {"op": "feedback", "record": rule["id"], "verdict": "helpful"}, source="cli"
    )
    write_operation(
        store, {"op": "add", "type": "preference", "text": "Use uv, not pip."}, source="cli"
    )
    write_operation(
        store, {"op": "edit", "record": rule["id"], "text": "Rebase, then push."}, source="cli"
    )
    before = _records(store)
    by_text = {record["text"]: record for record in before}
    newer = by_text["Rebase, then push."]
    assert newer["supersedes"] == rule["id"]
    old = next(record for record in before if record["id"] == rule["id"])
    assert old["status"] == "superseded" and old["helpful"] == 1
    write_operation(store, {"op": "forget", "record": newer["id"]}, source="cli")
    learn(store, rebuild=True)
    after = records_of(store, store.default_scope, now=NOW)
    assert {record["id"] for record in after} == {record["id"] for record in before} - {newer["id"]}
    assert [record["confidence"] for record in after] == [
        record["confidence"] for record in before if record["id"] != newer["id"]
    ]


def test_the_digest_holds_what_hooks_need_and_only_its_owner_reads_it(store, project):
    import os
    import stat

    store.write([prompt("s1", "Never run `terraform destroy` here.", "2026-05-01T10:00:00Z")])
    report = learn(store, now=NOW)
    [path] = report.digests
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    from capy.memory.digest import read_digest

    digest = read_digest(os.path.dirname(os.path.dirname(path)), str(project))
    [record] = digest["records"]
    assert record["block"]["id"] == "memory.block-terraform-destroy"
    assert digest["wrappers"]["wrappers"]


def test_a_cluster_of_related_records_is_consolidated_into_a_principle(store):
    store.write(
        [
            prompt(
                "s1",
                "Always run the pytest suite with -x before you commit.",
                "2026-05-01T10:00:00Z",
            ),
            prompt(
                "s2",
                "Please always run the pytest suite with -x -q when checking a pull request.",
                "2026-05-02T10:00:00Z",
            ),
            prompt(
                "s3", "From now on, run the pytest suite with -x first.", "2026-05-03T10:00:00Z"
            ),
            prompt("s4", "I prefer tabs over spaces in the Makefile.", "2026-05-04T10:00:00Z"),
        ]
    )
    records = _records(store)
    [principle] = [record for record in records if record["type"] == "principle"]
    assert principle["sessions"] == ["s1", "s2", "s3"]
    assert "pytest suite with -x" in principle["text"]
    assert len([record for record in records if record["type"] == "preference"]) == 4
    # The members stay: a principle adds to them, it does not replace them.


def test_a_later_contradiction_supersedes_the_older_record_and_keeps_both(store):
    store.write(
        [
            prompt(
                "s1", "Never use `npm ci` in this repo, it is too slow.", "2026-05-01T10:00:00Z"
            ),
            prompt(
                "s2", "From now on, always use `npm ci` for clean installs.", "2026-05-02T10:00:00Z"
            ),
        ]
    )
    records = {record["status"]: record for record in _records(store)}
    assert set(records) == {"superseded", "candidate"}
    assert records["superseded"]["superseded_by"] == records["candidate"]["id"]
    assert records["candidate"]["supersedes"] == records["superseded"]["id"]


def test_real_sessions_from_the_vault_teach_rules_from_their_errors(
    store, shared_testdata, tmp_path
):
    from capy.capsules.backfill import backfill_from_vault
    from capy.vault import open_vault
    from capy.vault.importer import ImportOptions, import_sessions

    source = shared_testdata("claude-transcripts", "spotter")
    with open_vault(tmp_path / "vault.db") as vault:
        import_sessions(vault, ImportOptions(source=source))
        backfill_from_vault(store, vault)
    learn(store)
    rules = [record for record in records_of(store) if record["type"] == "rule"]
    assert rules, "the long real session has failed calls followed by ones that worked"
    kinds = {capsule.kind for record in rules for capsule in _capsules(store, record)}
    assert kinds == {"error", "tool_call"}


def _capsules(store, record):
    return [store.find(capsule_id)[1] for capsule_id in record["provenance"]]


def test_a_paraphrase_is_merged_by_cosine_when_the_semantic_model_is_here(store):
    from capy.memory.vectors import text_similarity

    if text_similarity() is None:
        import pytest

        pytest.skip("the semantic extra or its model is not installed: dedup is lexical only")
    store.write(
        [
            prompt(
                "s1", "Never run `terraform destroy` in this workspace.", "2026-05-01T10:00:00Z"
            ),
            prompt(
                "s2",
                "Do not run `terraform destroy` on this workspace, ever.",
                "2026-05-02T10:00:00Z",
            ),
            prompt("s3", "Always run `terraform fmt` before you commit.", "2026-05-03T10:00:00Z"),
        ]
    )
    records = {record["text"]: record for record in _records(store)}
    assert set(records) == {
        "Never run `terraform destroy` in this workspace.",
        "Always run `terraform fmt` before you commit.",
    }
    merged = records["Never run `terraform destroy` in this workspace."]
    assert merged["sessions"] == ["s1", "s2"] and len(merged["provenance"]) == 2


def test_opposite_polarities_are_never_merged_as_duplicates(store):
    store.write(
        [
            prompt("s1", "Never use the watch flag in this repo.", "2026-05-01T10:00:00Z"),
            prompt("s2", "Always use the watch flag in this repo.", "2026-05-02T10:00:00Z"),
        ]
    )
    assert sorted(record["polarity"] for record in _records(store)) == ["avoid", "do"]


def test_a_search_finds_a_record_by_meaning_when_the_semantic_model_is_here(store):
    from capy.memory.manage import search_records
    from capy.memory.vectors import text_similarity

    if text_similarity() is None:
        import pytest

        pytest.skip("the semantic extra or its model is not installed: search is lexical only")
    store.write(
        [
            prompt(
                "s1", "Never run `terraform destroy` in this workspace.", "2026-05-01T10:00:00Z"
            ),
            prompt("s2", "I prefer short commit messages in English.", "2026-05-02T10:00:00Z"),
        ]
    )
    [found, *_] = search_records(store, "remove all the cloud resources with terraform")
    assert found["text"] == "Never run `terraform destroy` in this workspace."


def test_rules_alike_only_in_their_template_words_are_no_principle(store):
    """Three unrelated "... and then running it again worked" rules share a dozen template
    words; a principle from them would say one of them while anchored on all three."""
    retries = [
        ("go vet ./pool", "pool.go:88: loop variable captured", "make deps"),
        ("actionlint release.yml", 'release.yml:31: "runs-on" is missing', "git stash"),
        ("cargo clippy -p engine", "error: could not compile `engine`", "rustup update"),
    ]
    for day, (command, error, step) in enumerate(retries, start=1):
        at = f"2026-05-{day:02d}T10:00:0"
        store.write(
            [
                call(f"s{day}", command, error, at + "1Z", failed=True),
                call(f"s{day}", step, "done", at + "2Z"),
                call(f"s{day}", command, "ok", at + "3Z"),
            ]
        )
    records = _records(store)
    rules = [record for record in records if record["type"] == "rule"]
    assert len(rules) == 3
    assert all("and then running it again worked" in rule["text"] for rule in rules), rules
    assert not [record for record in records if record["type"] == "principle"]
