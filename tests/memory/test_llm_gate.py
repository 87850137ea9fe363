"""The quality gate with a chat model: a real OpenAI-compatible server on loopback with scripted
replies (good, fenced, malformed, HTTP 500). The model's four scores decide, the total is
recomputed, every failure falls back to the no-LLM scores and is logged, and a rebuild replays
cached replies without calling again."""

from __future__ import annotations

import json

from memory_helpers import prompt

from capy.capsules.sqlite.memory import log_entries
from capy.memory import learn, records_of
from capy.memory.llm_gate import parse_scores
from tests.llm.chat_server import chat_server

NOW = 1_777_939_200.0


def _reply(content: str) -> bytes:
    return json.dumps(
        {"choices": [{"message": {"role": "assistant", "content": content}}]}
    ).encode()


LOW = '{"actionable": 1, "specific": 1, "novel": 1, "durable": 1, "total": 16}'
HIGH = '```json\n{"actionable": 4, "specific": 4, "novel": 4, "durable": 3}\n```'


def test_the_model_scores_decide_and_failures_fall_back(store, monkeypatch):
    store.write(
        [
            prompt(
                "s1", "Always run `make lint` before you commit anything.", "2026-05-01T10:00:00Z"
            ),
            prompt(
                "s2", "From now on, use `uv run` for every python command.", "2026-05-02T10:00:00Z"
            ),
            prompt(
                "s3", "I prefer `ruff format` over black for formatting.", "2026-05-03T10:00:00Z"
            ),
            prompt(
                "s4", "Never run `terraform destroy` on this workspace.", "2026-05-04T10:00:00Z"
            ),
        ]
    )
    script = [
        (200, _reply(LOW), 0.0),
        (200, _reply(HIGH), 0.0),
        (200, _reply("I think it is a fine lesson!"), 0.0),
        (500, b'{"error": "boom"}', 0.0),
    ]
    with chat_server(script) as (url, seen):
        monkeypatch.setenv("CAPY_LLM__BASE_URL", url)
        monkeypatch.setenv("CAPY_LLM__MODEL", "tiny")
        learn(store, now=NOW)
        texts = {record["text"] for record in records_of(store, store.default_scope, now=NOW)}
        # s1-s3: one score each; s4 (a correction): its causal analysis, then its score, both
        # answered by the last scripted reply, an HTTP 500.
        assert len(seen) == 5
        learn(store, rebuild=True, now=NOW)
        assert len(seen) == 7  # only the calls that failed are asked again
    # s1: the model scored 4 of 16 (its "total" of 16 is ignored): rejected.
    assert not any("make lint" in text for text in texts)
    # s2: fenced, 15 of 16: kept. s3 (malformed) and s4 (HTTP 500): the no-LLM scores stand.
    assert any("uv run" in text for text in texts)
    assert any("ruff format" in text for text in texts)
    assert any("terraform destroy" in text for text in texts)
    events = [entry[2] for entry in log_entries(store.conn, store.default_scope, 50)]
    assert events.count("llm-fallback") == 3 and events.count("rejected") == 1


def test_only_four_scores_in_range_are_read():
    assert parse_scores('{"actionable": 4, "specific": 3, "novel": 2, "durable": 1}') == {
        "actionable": 4,
        "specific": 3,
        "novel": 2,
        "durable": 1,
    }
    assert parse_scores('{"actionable": 5, "specific": 3, "novel": 2, "durable": 1}') is None
    assert parse_scores('{"actionable": 4, "specific": 3, "novel": 2}') is None
    assert parse_scores("[4, 4, 4, 4]") is None
    assert parse_scores("not json") is None
    assert (
        parse_scores('```\n{"actionable": 0, "specific": 0, "novel": 0, "durable": true}\n```')
        is None
    )
