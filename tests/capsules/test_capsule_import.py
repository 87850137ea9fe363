"""Bulk imports: JSONL files and the vault backfill from a real Claude Code transcript."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from capy.capsules import CapsuleError, Scope
from capy.capsules.backfill import backfill_from_vault
from capy.capsules.importing import import_path

FINE = '{"kind": "note", "content": "fine", "created_at": "2026-01-01T00:00:00Z"}\n'


def write_jsonl(path, lines) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def test_a_jsonl_file_imports_once_with_its_scopes_and_times(capsules, tmp_path) -> None:
    source = tmp_path / "capsules.jsonl"
    write_jsonl(
        source,
        [
            {
                "kind": "prompt",
                "content": "why does the build fail?",
                "created_at": "2026-01-02T03:04:05Z",
            },
            {
                "kind": "decision",
                "content": "pin zstandard",
                "created_at": "2026-01-02T04:00:00+01:00",
                "scope": "shop",
                "metadata": {"tags": ["deps"]},
            },
            {
                "kind": "error",
                "content": "exit 1",
                "created_at": "2026-01-02T05:00:00",
                "source": "hook",
                "scope": {"tenant": "t", "project": "p"},
            },
        ],
    )
    first = import_path(capsules, source)
    assert (first.read, first.new, first.known) == (3, 3, 0)
    again = import_path(capsules, source)
    assert (again.new, again.known) == (0, 3)
    stored = [capsule for _, capsule in capsules.backend.scan()]
    assert [c.created_at for c in stored] == [
        "2026-01-02T03:04:05.000000Z",
        "2026-01-02T03:00:00.000000Z",
        "2026-01-02T05:00:00.000000Z",
    ]
    assert [c.scope for c in stored][1:] == [Scope("shop"), Scope("p", "t")]
    assert [c.source for c in stored] == ["import", "import", "hook"]


def test_a_secret_in_an_import_is_redacted_before_it_is_hashed(capsules, tmp_path) -> None:
    source = tmp_path / "secret.jsonl"
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    write_jsonl(source, [{"kind": "note", "content": f"token {token}", "created_at": "2026-01-01"}])
    import_path(capsules, source)
    [(_, capsule)] = list(capsules.backend.scan())
    assert token not in capsule.content


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "line 2 of bad.jsonl is not JSON"),
        ('{"kind": "note"}', "line 2 of bad.jsonl needs a kind and a content"),
        ('{"kind": "note", "content": "x"}', "needs a created_at"),
        (
            '{"kind": "gossip", "content": "x", "created_at": "2026-01-01"}',
            "line 2 of bad.jsonl: unknown capsule kind",
        ),
        (
            '{"kind": "note", "content": "x", "created_at": "2026-01-01", "when": 1}',
            "unknown fields \\(when\\)",
        ),
        ('{"kind": "note", "content": "x", "created_at": "soon"}', "is not an ISO 8601 time"),
        (
            '{"kind": "note", "content": "x", "created_at": "2026-01-01", "scope": 3}',
            "scope is a project name",
        ),
    ],
)
def test_a_bad_line_stops_the_import_before_anything_is_written(
    capsules, tmp_path, line, message
) -> None:
    source = tmp_path / "bad.jsonl"
    source.write_text(FINE + line + "\n", encoding="utf-8")
    with pytest.raises(CapsuleError, match=message):
        import_path(capsules, source)
    assert list(capsules.backend.scan()) == []


def test_a_missing_path_is_one_sentence(capsules, tmp_path) -> None:
    with pytest.raises(CapsuleError, match="does not exist: give a JSONL file"):
        import_path(capsules, tmp_path / "nowhere.jsonl")


@pytest.fixture
def vault_with_a_real_session(shared_testdata, tmp_path):
    """A real vault holding the spotter transcripts (real Claude Code sessions)."""
    from capy.vault import open_vault
    from capy.vault.importer import ImportOptions, import_sessions

    source = shared_testdata("claude-transcripts", "spotter")
    with open_vault(tmp_path / "vault.db") as vault:
        report = import_sessions(vault, ImportOptions(source=source))
        assert report.sessions
        yield vault


def test_the_vault_backfill_keeps_times_and_sessions_and_runs_once(
    capsules, vault_with_a_real_session
) -> None:
    from capy.vault.archived import parse_archived

    report = backfill_from_vault(capsules, vault_with_a_real_session)
    assert report.sessions >= 4 and report.unreadable == 0
    assert report.imported.new > 100
    stored = [capsule for _, capsule in capsules.backend.scan()]
    kinds = Counter(capsule.kind for capsule in stored)
    assert {"prompt", "response", "tool_call", "error"} <= set(kinds)
    assert all(capsule.source == "import" for capsule in stored)
    # The long session's first prompt keeps its original time and session id.
    conn = vault_with_a_real_session.conn
    rowid = conn.execute(
        "SELECT id FROM sessions WHERE session_id = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04'"
    ).fetchone()[0]
    session = parse_archived(conn, rowid, capsules.rules)
    first_prompt = next(message for message in session.messages if message.kind == "prompt")
    mine = [c for c in stored if c.metadata.get("session_id") == session.session_id]
    assert mine[0].kind == "prompt"
    assert mine[0].created_at[:19] == first_prompt.timestamp[:19]
    assert mine[0].scope == Scope(session.cwd)
    calls = [c for c in mine if c.kind == "tool_call"]
    assert any(c.metadata.get("tool") == "Bash" and "command" in c.metadata for c in calls)
    # A subagent's sidecar is kept, the compaction agent's recap of the session is not.
    agents = {c.metadata.get("agent_id") for c in stored} - {None}
    assert agents and not any(agent.startswith("acompact") for agent in agents)
    # An edit or a read names its file as hook capture does, so every chunk's title carries it.
    touched = [
        c
        for c in stored
        if c.kind in ("tool_call", "diff") and c.metadata.get("tool") in ("Edit", "Write", "Read")
    ]
    assert touched and all(c.metadata.get("files") for c in touched)
    assert all(c.metadata["files"][0] in c.content for c in touched if c.kind == "diff")
    # A failed call is one error at its call's place, as hook capture records it: never also
    # a tool call (a near-duplicate that took the place of the reply reacting to it).
    calls_seen = Counter(
        (c.metadata["session_id"], c.metadata["tool_use_id"])
        for c in stored
        if "tool_use_id" in c.metadata
    )
    assert max(calls_seen.values()) == 1
    errors = [c for c in stored if c.kind == "error"]
    assert errors and all(c.metadata.get("tool") and c.metadata.get("tool_use_id") for c in errors)
    again = backfill_from_vault(capsules, vault_with_a_real_session)
    assert (again.imported.new, again.imported.known) == (0, report.imported.read)
    assert all(chain.ok for chain in capsules.verify())


def test_a_backfill_rendered_otherwise_adds_no_capsule_again(
    capsules, vault_with_a_real_session, monkeypatch
) -> None:
    """A later capy renders the same events otherwise (a call's summary reworded, a created
    file's diff marked): their capsules' ids change, yet the events are in the log already."""
    from dataclasses import replace

    from capy.capsules import backfill

    first = backfill_from_vault(capsules, vault_with_a_real_session)
    rendered = backfill.session_drafts

    def reworded(*arguments):
        for draft in rendered(*arguments):
            yield replace(draft, content=f"{draft.content}\nrendered anew")

    monkeypatch.setattr(backfill, "session_drafts", reworded)
    again = backfill_from_vault(capsules, vault_with_a_real_session)
    assert (again.imported.new, again.imported.known) == (0, first.imported.read)
    assert len(list(capsules.backend.scan())) == first.imported.new


def test_a_batch_mixing_stored_repeated_and_new_capsules_numbers_each_once(capsules) -> None:
    from capy.capsules import CapsuleDraft

    def note(text: str) -> CapsuleDraft:
        return CapsuleDraft("note", text, "cli", created_at="2026-01-01T00:00:00Z")

    [first] = capsules.write([note("a")])
    mixed = capsules.write([note("b"), note("a"), note("c"), note("b")])
    assert [(r.new, r.seq) for r in mixed] == [(True, 2), (False, 1), (True, 3), (False, 2)]
    assert mixed[1].n == first.n and len({r.n for r in mixed}) == 3
    stored = [(n, c.seq) for n, c in capsules.backend.scan()]
    assert stored == [(first.n, 1), (mixed[0].n, 2), (mixed[2].n, 3)]
    assert all(chain.ok for chain in capsules.verify())
