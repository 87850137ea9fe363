"""The capsule log: ids, idempotent writes, the hash chain, immutability and erasure, on a real
SQLCipher file."""

from __future__ import annotations

import pytest

from capy.capsules import CapsuleDraft, CapsuleError, Scope
from capy.capsules.model import capsule_id

GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def note(text: str, **extra) -> CapsuleDraft:
    return CapsuleDraft(kind="note", content=text, source="cli", **extra)


def test_a_capsule_id_is_the_hash_of_its_canonical_json(capsules):
    [written] = capsules.write([note("use uv, not pip", created_at="2026-05-01T12:00:00Z")])
    _, stored = capsules.find(written.id)
    assert stored.id == capsule_id(stored.body()) == written.id
    assert stored.created_at == "2026-05-01T12:00:00.000000Z"
    assert stored.scope == capsules.default_scope


def test_writing_the_same_capsule_twice_stores_it_once(capsules):
    draft = note("same", created_at="2026-05-01T12:00:00+02:00")
    first, again = capsules.write([draft]), capsules.write([draft])
    assert first[0].new and not again[0].new
    assert first[0].id == again[0].id
    assert capsules.conn.execute("SELECT count(*) FROM capsules").fetchone()[0] == 1


def test_secrets_are_redacted_before_the_capsule_is_hashed(capsules):
    [written] = capsules.write([note(f"token {GITHUB_TOKEN}", metadata={"command": GITHUB_TOKEN})])
    _, stored = capsules.find(written.id)
    assert GITHUB_TOKEN not in stored.content
    assert GITHUB_TOKEN not in str(stored.metadata)
    assert stored.id == capsule_id(stored.body())


def test_each_scope_is_chained_and_verifies(capsules):
    other = Scope("elsewhere")
    capsules.write([note("one"), note("two"), note("three", scope=other), note("four")])
    reports = {report.scope: report for report in capsules.verify()}
    assert [report.capsules for report in reports.values()] and all(
        report.ok for report in reports.values()
    )
    assert reports["local/elsewhere"].capsules == 1
    assert sum(report.capsules for report in reports.values()) == 4


def test_the_database_refuses_to_change_or_delete_a_capsule(capsules):
    capsules.write([note("kept")])
    for statement in ("UPDATE capsules SET content = 'changed'", "DELETE FROM capsules"):
        with pytest.raises(Exception, match="immutable"):
            capsules.conn.execute(statement)


def test_verification_finds_an_altered_a_dropped_and_a_truncated_chain(capsules):
    capsules.write([note(f"capsule {i}") for i in range(5)])
    conn = capsules.conn
    conn.execute("DROP TRIGGER capsules_refuse_update")
    conn.execute("DROP TRIGGER capsules_refuse_delete")
    conn.execute("UPDATE capsules SET content = 'rewritten' WHERE seq = 2")
    conn.execute("DELETE FROM capsules WHERE seq = 4")
    [report] = capsules.verify()
    assert not report.ok
    text = " ".join(report.problems)
    assert "capsule 2" in text and "altered" in text
    assert "4..4 are missing" in text
    conn.execute("DELETE FROM capsules WHERE seq = 5")
    [report] = capsules.verify()
    assert any("newest" in problem for problem in report.problems)


def test_forgetting_erases_content_keeps_the_chain_and_refuses_a_second_time(capsules):
    written = capsules.write([note("a secret the detectors missed: hunter2"), note("after")])
    forgotten = capsules.forget(written[0].id[:8], reason="a password was pasted")
    _, stored = capsules.find(forgotten.id)
    assert stored.forgotten and stored.content == "" and stored.metadata == {}
    assert stored.forgotten_reason == "a password was pasted"
    assert [report.ok for report in capsules.verify()] == [True]
    with pytest.raises(CapsuleError, match="already forgotten"):
        capsules.forget(forgotten.id, reason="again")
    with pytest.raises(Exception, match="immutable"):  # a forgotten capsule stays forgotten
        capsules.conn.execute("UPDATE capsules SET forgotten_reason = 'other' WHERE seq = 1")
    assert (
        capsules.conn.execute(
            "SELECT count(*) FROM capsule_jobs WHERE target = ?", (forgotten.id,)
        ).fetchone()[0]
        == 0
    )


@pytest.mark.parametrize(
    ("draft", "message"),
    [
        (CapsuleDraft(kind="thought", content="x", source="cli"), "unknown capsule kind"),
        (CapsuleDraft(kind="note", content="x", source="email"), "unknown capsule source"),
        (note("x", metadata={"exit_status": "zero"}), "must be a integer"),
        (note("x", created_at="yesterday"), "ISO 8601"),
        (note("x" * 300_000), "over the limit"),
    ],
)
def test_bad_drafts_are_refused_with_a_reason_and_nothing_is_written(capsules, draft, message):
    with pytest.raises(CapsuleError, match=message):
        capsules.write([note("fine"), draft])
    assert capsules.conn.execute("SELECT count(*) FROM capsules").fetchone()[0] == 0


def test_each_new_capsule_gets_its_per_capsule_jobs_in_the_same_transaction(capsules):
    [written] = capsules.write([note("x")])
    stages = {
        row[0]
        for row in capsules.conn.execute(
            "SELECT stage FROM capsule_jobs WHERE target = ?", (written.id,)
        )
    }
    per_capsule = {
        s.name for s in capsules.rules.view("capsules").live_stages if s.per == "capsule"
    }
    assert stages == per_capsule


def test_an_id_prefix_must_be_long_enough_and_unambiguous(capsules):
    with pytest.raises(CapsuleError, match="at least 6"):
        capsules.find("abc")
    with pytest.raises(CapsuleError, match="no capsule"):
        capsules.find("ffffffffff")


def test_the_chunk_stage_replaces_a_capsules_chunks_and_titles_them_by_what_it_is(capsules):
    from capy.capsules.stages import StageContext, stage_module

    content = "FAILED tests/test_x.py::test_a - AssertionError\n1 failed"
    meta = {"tool": "Bash", "command": "pytest -q"}
    [written] = capsules.write(
        [CapsuleDraft(kind="tool_call", content=content, source="hook", metadata=meta)]
    )
    n, capsule = capsules.find(written.id)
    context = StageContext(capsules.conn, capsules.rules, "chunk", "v1")
    chunk = stage_module("chunk")
    first = chunk.run(context, n, capsule)
    assert chunk.run(context, n, capsule) == first  # a second run replaces, never adds
    rows = capsules.conn.execute("SELECT title, content FROM capsule_chunks").fetchall()
    assert len(rows) == first and all(
        title.startswith("tool call Bash pytest -q") for title, _ in rows
    )
    assert capsules.conn.execute("SELECT chunks, version FROM capsule_chunk_sets").fetchall() == [
        (first, "v1")
    ]
