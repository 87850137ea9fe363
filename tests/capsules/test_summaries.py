"""Summaries: extractive by default, through a configured chat model (a real server on
loopback) with its replies cached by prompt hash, extractive again when the model fails."""

from __future__ import annotations

import json

from capy.capsules import CapsuleDraft
from capy.capsules.pipeline import drain, rebuild
from tests.llm.chat_server import GOOD, chat_server


def test_a_session_with_enough_capsules_gets_hierarchical_summaries(capsules):
    capsules.write(
        [
            CapsuleDraft(
                kind="error" if i % 5 == 0 else "note",
                content=f"pytest failed on step {i}. The store was locked.",
                source="cli",
                metadata={"session_id": "s1"},
            )
            for i in range(30)
        ]
    )
    drain(capsules)
    rows = capsules.conn.execute(
        "SELECT session_id, level, first_seq, last_seq, method FROM summaries ORDER BY 1, 2, 3"
    ).fetchall()
    session = [row for row in rows if row[0] == "s1"]
    assert [row[1] for row in session] == [1, 1, 1, 2]  # three windows of 12, one above them
    assert session[-1][2:4] == (1, 30) and {row[4] for row in rows} == {"extractive"}
    assert any(row[0] == "" for row in rows)  # the scope-wide summary once 20 capsules gather


def _one_session(capsules, template: str, count: int = 6) -> None:
    capsules.write(
        [
            CapsuleDraft(
                kind="note",
                content=template.format(i=i),
                source="cli",
                metadata={"session_id": "s1"},
            )
            for i in range(count)
        ]
    )


def test_summaries_use_the_configured_model_and_cache_its_replies(capsules, monkeypatch):
    _one_session(capsules, "step {i} of the fix")
    with chat_server([(200, json.dumps(GOOD).encode(), 0)]) as (url, seen):
        monkeypatch.setenv("CAPY_LLM__BASE_URL", url)
        monkeypatch.setenv("CAPY_LLM__MODEL", "tiny")
        drain(capsules)
        rows = capsules.conn.execute("SELECT content, method FROM summaries").fetchall()
        assert rows == [("A short summary.", "llm:tiny")]
        asked = len(seen)
        rebuild(capsules, ["summarise"])
        drain(capsules)
        assert len(seen) == asked  # the reply came from the cache
    assert capsules.conn.execute("SELECT count(*) FROM llm_replies").fetchone()[0] == asked


def test_an_unreachable_model_leaves_extractive_summaries(capsules, monkeypatch):
    _one_session(capsules, "pytest failed in step {i} again")
    monkeypatch.setenv("CAPY_LLM__BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("CAPY_LLM__MODEL", "tiny")
    drain(capsules)
    [(method,)] = capsules.conn.execute("SELECT method FROM summaries").fetchall()
    assert method == "extractive"
