"""`capy sweep`: past sessions into the knowledge base, with a dry run that matches the real one."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from capy.cli.sweep import sweep as sweep_command
from capy.sessions.state import state_path
from capy.sessions.sweep import SweepOptions, sweep

REPLY = "I will run the deploy script, then read its log to confirm the release went out."
FAKE_TOKEN = "ghp_a1B2c3D4e5F6g7H8j9K0a1B2c3D4e5F6g7H8"  # visibly fake, from the secrets pack


def _stored(db: Path) -> dict[str, tuple[str, int | None, int]]:
    """label -> (kind, time to live in seconds, chunk count), read back from the database."""
    from capy.store import open_store
    from capy.store.chunkstore import count_chunks

    with open_store(db_path=db) as store:
        rows = store.conn.execute(
            "SELECT id, label, kind, expires_at - created_at FROM sources"
        ).fetchall()
        return {label: (kind, ttl, count_chunks(store.conn, sid)) for sid, label, kind, ttl in rows}


def _all_text(db: Path) -> str:
    from capy.store import open_store

    with open_store(db_path=db) as store:
        rows = store.conn.execute("SELECT title, content FROM chunks").fetchall()
    return "\n".join(f"{title}\n{content}" for title, content in rows)


def _session(folder: Path, writer, line, *, cwd: str, prompt: str, name: str = "s-1") -> Path:
    return writer(
        folder / f"{name}.jsonl",
        [
            line("user", prompt, cwd=cwd, uuid="u1"),
            line(
                "assistant",
                [
                    {
                        "type": "text",
                        "text": REPLY,
                    },
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Bash",
                        "input": {"command": "./deploy.sh", "description": "Deploy"},
                    },
                ],
                cwd=cwd,
                uuid="a1",
            ),
            line(
                "user",
                [{"type": "tool_result", "tool_use_id": "t1", "content": "deployed v1.2.3"}],
                cwd=cwd,
                uuid="r1",
            ),
        ],
    )


def test_dry_run_counts_equal_the_real_run(settled_claude_transcripts, tmp_path):
    db = tmp_path / "kb.db"
    options = dict(source=settled_claude_transcripts, db_path=db)
    planned = sweep(SweepOptions(dry_run=True, **options))
    assert not db.exists()  # a dry run writes nothing, not even a key or a database
    done = sweep(SweepOptions(**options))
    assert planned.counts == done.counts and planned.totals == done.totals
    assert [(s.label, s.outcome, s.chunks) for s in planned.sessions] == [
        (s.label, s.outcome, s.chunks) for s in done.sessions
    ]
    assert done.counts["indexed"] == 8
    stored = _stored(db)
    assert {s.label for s in done.sessions} == set(stored)
    for item in done.sessions:
        kind, ttl, chunks = stored[item.label]
        assert kind == "session" and ttl == 60 * 24 * 3600  # the retention pack's session TTL
        assert chunks == item.chunks
    long = next(
        s for s in done.sessions if s.label.endswith("ae4a77f8-aedd-4bc1-888f-c94edc91af04")
    )
    assert long.sidecars == 2 and long.tool_calls == 242 + 12  # main session + research sidecar
    assert done.totals["malformed_lines"] == 3  # edge_cases.jsonl's non-object lines


def test_second_sweep_skips_unchanged_and_force_redoes(settled_claude_transcripts, tmp_path):
    db = tmp_path / "kb.db"
    first = sweep(SweepOptions(source=settled_claude_transcripts, db_path=db))
    assert state_path(db).is_file()
    again = sweep(SweepOptions(source=settled_claude_transcripts, db_path=db))
    assert again.counts["unchanged"] == first.counts["indexed"] == 8
    assert {s.label for s in again.sessions} == {s.label for s in first.sessions}
    forced = sweep(SweepOptions(source=settled_claude_transcripts, db_path=db, force=True))
    assert forced.counts["indexed"] == 8


def test_changed_file_is_swept_again(tmp_path, jsonl_writer, make_claude_line):
    folder, db = tmp_path / "src", tmp_path / "kb.db"
    path = _session(folder, jsonl_writer, make_claude_line, cwd="/", prompt="deploy the app please")
    assert sweep(SweepOptions(source=folder, db_path=db)).counts["indexed"] == 1
    os.utime(path, (1_700_000_500, 1_700_000_500))
    assert sweep(SweepOptions(source=folder, db_path=db)).counts["indexed"] == 1


def test_live_small_and_homeless_sessions_are_skipped(
    tmp_path, project_dir, jsonl_writer, make_claude_line
):
    folder = tmp_path / "src"
    live = _session(
        folder,
        jsonl_writer,
        make_claude_line,
        cwd=str(project_dir),
        prompt="deploy it",
        name="live",
    )
    os.utime(live, None)  # just written: the session may still be running
    jsonl_writer(folder / "small.jsonl", [make_claude_line("user", "/model", cwd=str(project_dir))])
    _session(
        folder,
        jsonl_writer,
        make_claude_line,
        cwd="/nonexistent/project",
        prompt="hello",
        name="gone",
    )
    home = _session(
        folder,
        jsonl_writer,
        make_claude_line,
        cwd=str(project_dir),
        prompt="deploy the release candidate",
        name="home",
    )
    report = sweep(SweepOptions(source=folder))
    outcome = {Path(item.path).stem: item.outcome for item in report.sessions}
    assert outcome == {
        "live": "live",
        "small": "too-small",
        "gone": "no-project",
        "home": "indexed",
    }
    # The session went into the knowledge base of the project it ran in.
    from capy.store import locate_store

    db = locate_store(project_dir=project_dir).path
    indexed = next(item for item in report.sessions if item.outcome == "indexed")
    assert indexed.database == str(db) and indexed.label in _stored(db)
    assert home.exists()


def test_default_discovery_reads_the_agents_folders(project_dir, jsonl_writer, make_claude_line):
    home = Path.home()
    _session(
        home / ".claude/projects/-proj",
        jsonl_writer,
        make_claude_line,
        cwd=str(project_dir),
        prompt="deploy from claude",
        name="claude-one",
    )
    codex = home / ".codex/sessions/2026/01/05/rollout-2026-01-05T10-00-00-abc.jsonl"
    jsonl_writer(
        codex,
        [
            {"type": "session_meta", "payload": {"id": "abc", "cwd": str(project_dir)}},
            {
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "user",
                    "content": [
                        {
                            "type": "input_text",
                            "text": "deploy from codex, then report back with the notes",
                        }
                    ],
                },
            },
            {
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [
                        {
                            "type": "output_text",
                            "text": REPLY,
                        }
                    ],
                },
            },
        ],
    )
    report = sweep(SweepOptions(dry_run=True))
    assert sorted((s.platform, s.outcome) for s in report.sessions) == [
        ("claude-code", "indexed"),
        ("codex", "indexed"),
    ]
    assert {s.label for s in report.sessions} == {
        "session:claude-code:claude-one",
        "session:codex:abc",
    }


def test_secrets_are_redacted_before_indexing(tmp_path, jsonl_writer, make_claude_line):
    folder, db = tmp_path / "src", tmp_path / "kb.db"
    prompt = f"use GITHUB_TOKEN={FAKE_TOKEN} to push the release"
    _session(folder, jsonl_writer, make_claude_line, cwd="/", prompt=prompt)
    report = sweep(SweepOptions(source=folder, db_path=db))
    (item,) = report.sessions
    assert item.outcome == "indexed" and sum(item.redactions.values()) >= 1
    text = _all_text(db)
    assert FAKE_TOKEN not in text and "[REDACTED:secrets.github" in text
    from capy.store import open_store
    from capy.store.codec import decompress_text

    with open_store(db_path=db) as store:
        (raw,) = store.conn.execute("SELECT raw FROM sources").fetchone()
    assert FAKE_TOKEN not in decompress_text(raw)


def test_cli_prints_json_and_refuses_a_missing_source(tmp_path, capsys, settled_claude_transcripts):
    db = tmp_path / "kb.db"
    assert sweep_command(source=settled_claude_transcripts, db=db, dry_run=True, as_json=True) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["dry_run"] is True and data["counts"]["indexed"] == 8
    assert not db.exists()
    assert sweep_command(source=settled_claude_transcripts, db=db) == 0
    out = capsys.readouterr().out
    assert out.startswith("indexed 8 of 8 sessions:")
    assert sweep_command(source=tmp_path / "missing") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is not a folder" in err


def test_unreadable_state_file_means_sweep_again(tmp_path, jsonl_writer, make_claude_line):
    folder, db = tmp_path / "src", tmp_path / "kb.db"
    _session(folder, jsonl_writer, make_claude_line, cwd="/", prompt="deploy the app please")
    sweep(SweepOptions(source=folder, db_path=db))
    state_path(db).write_text("{not json", encoding="utf-8")
    assert sweep(SweepOptions(source=folder, db_path=db, now=time.time())).counts["indexed"] == 1
