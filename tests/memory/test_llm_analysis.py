"""Causal analysis with a chat model: a real OpenAI-compatible server on loopback with scripted
replies. A good analysis (plain or fenced) rewrites a lesson's text and gives its cause while
the record keeps its id; malformed, cut-off, prose, HTTP 500, slow replies and a lesson that
drops the command fall back to the no-LLM lesson, logged for `capy memory log`; calls and
seconds are bounded per session; a rebuild replays cached replies without calling."""

from __future__ import annotations

import json

from memory_helpers import call, prompt, push_episode

from capy.capsules.sqlite.memory import log_entries
from capy.llm import ChatModel
from capy.llm.bounded import BoundedChat
from capy.memory import learn, records_of
from tests.llm.chat_server import chat_server

NOW = 1_777_939_200.0
SCORES = '{"actionable": 4, "specific": 4, "novel": 4, "durable": 4}'


def _reply(content: str) -> bytes:
    return json.dumps(
        {"choices": [{"message": {"role": "assistant", "content": content}}]}
    ).encode()


def _good(content: str) -> tuple[int, bytes, float]:
    return 200, _reply(content), 0.0


ERROR_ANALYSIS = json.dumps(
    {
        "cause": "The remote branch had commits the local one lacked (non-fast-forward).",
        "lesson": "When `git push` is rejected as non-fast-forward, run "
        "`git pull --rebase origin BRANCH` and push again.",
    }
)
CORRECTION_ANALYSIS = (
    "```json\n"
    + json.dumps(
        {
            "lessons": [
                {
                    "n": 1,
                    "cause": "The repository is locked with pnpm; npm would break pnpm-lock.yaml.",
                    "lesson": "Install packages with `pnpm add`, never npm, in this repository.",
                }
            ]
        }
    )
    + "\n```"
)


def _correction_session(session: str) -> list:
    return [
        prompt(session, "install zod for the form validation", "2026-05-02T10:00:00Z"),
        call(session, "npm install zod", "added 1 package", "2026-05-02T10:00:01Z"),
        prompt(
            session,
            "No, use `pnpm add` here, this repo has a pnpm-lock.yaml.",
            "2026-05-02T10:00:02Z",
        ),
    ]


def _texts(store) -> dict[str, dict]:
    return {record["source"]: record for record in records_of(store, now=NOW)}


def test_a_good_analysis_rewrites_the_lesson_and_a_rebuild_replays_it(store, monkeypatch):
    store.write([*push_episode("s1", day=1), *_correction_session("s2")])
    script = [
        _good(ERROR_ANALYSIS),  # s1: the error and its fix
        _good(SCORES),  # s1: the gate
        _good(CORRECTION_ANALYSIS),  # s2: the session's corrections, fenced
        _good(SCORES),  # s2: the gate
    ]
    with chat_server(script) as (url, seen):
        monkeypatch.setenv("CAPY_LLM__BASE_URL", url)
        monkeypatch.setenv("CAPY_LLM__MODEL", "tiny")
        learn(store, now=NOW)
        first = _texts(store)
        assert len(seen) == 4
        analysis = seen[0]["body"]["messages"][1]["content"]
        assert "git push origin login-form" in analysis and "non-fast-forward" in analysis
        assert (
            'The user said: "No, use `pnpm add` here' in seen[2]["body"]["messages"][1]["content"]
        )
        learn(store, rebuild=True, now=NOW)
        assert len(seen) == 4  # every reply came from the cache
    rule, correction = first["error_fix"], first["correction"]
    assert rule["text"].startswith("When `git push` is rejected as non-fast-forward")
    assert rule["cause"].startswith("The remote branch had commits")
    assert correction["text"] == "Install packages with `pnpm add`, never npm, in this repository."
    assert "pnpm-lock.yaml" in correction["cause"]
    assert _texts(store) == first  # the same records, ids and texts after the rebuild
    events = [entry[2] for entry in log_entries(store.conn, store.default_scope, 50)]
    assert "llm-fallback" not in events


def test_every_failed_analysis_keeps_the_no_llm_lesson_and_is_logged(store, monkeypatch):
    store.write([*push_episode("s1", day=1), *_correction_session("s2")])
    dropped = json.dumps({"lessons": [{"n": 1, "cause": "npm breaks it", "lesson": "Use pnpm."}]})
    unnamed = json.dumps({"cause": "a stale branch", "lesson": "Rebase first, then retry."})
    for failing in (
        (500, b'{"error": "boom"}', 0.0),
        _good('{"cause": "the remote moved", "lesson": '),  # cut off
        _good("The push failed because the remote moved on."),  # prose
        _good(unnamed),  # names no `git`
    ):
        with chat_server([failing, _good(SCORES), _good(dropped), _good(SCORES)]) as (url, seen):
            monkeypatch.setenv("CAPY_LLM__BASE_URL", url)
            monkeypatch.setenv("CAPY_LLM__MODEL", f"tiny-{len(seen)}-{failing[1][:12]!r}")
            learn(store, rebuild=True, now=NOW)
        records = _texts(store)
        assert records["error_fix"]["text"].startswith("When `git push origin login-form` fails")
        assert records["error_fix"]["cause"] is None
        # The correction's lesson dropped the user's `pnpm add`: the user's words stand.
        assert records["correction"]["text"].startswith("No, use `pnpm add` here")
        details = [
            entry[3]
            for entry in log_entries(store.conn, store.default_scope, 50)
            if entry[2] == "llm-fallback"
        ]
        assert len(details) == 2, details
        assert any("dropped the user's `pnpm add`" in detail for detail in details)


def test_a_slow_model_times_out_and_the_session_budget_holds(store, monkeypatch):
    store.write(push_episode("s1", day=1))
    monkeypatch.setenv("CAPY_LLM__TIMEOUT", "1")
    with chat_server([(200, _reply(ERROR_ANALYSIS), 1.5)]) as (url, _seen):
        monkeypatch.setenv("CAPY_LLM__BASE_URL", url)
        monkeypatch.setenv("CAPY_LLM__MODEL", "slow")
        learn(store, now=NOW)
    [record] = records_of(store, now=NOW)
    assert record["text"].startswith("When `git push origin login-form` fails")
    details = [entry[3] for entry in log_entries(store.conn, store.default_scope, 50)]
    assert any("did not answer within 1 s" in detail for detail in details)


class _Replies(dict):
    def get(self, prompt_hash):
        return super().get(prompt_hash)

    def put(self, prompt_hash, model, reply):
        self[prompt_hash] = reply


def test_calls_and_seconds_are_bounded_per_session():
    messages = [[{"role": "user", "content": f"question {n}"}] for n in range(4)]
    with chat_server([(200, _reply("fine"), 0.0)]) as (url, seen):
        model = ChatModel(url, "tiny", timeout=5.0)
        counted = BoundedChat(model, _Replies(), max_calls=2, max_seconds=60)
        assert counted.ask("a", messages[0], max_tokens=10) == ("fine", None)
        assert counted.ask("a", messages[1], max_tokens=10) == ("fine", None)
        assert counted.ask("a", messages[2], max_tokens=10) == (
            None,
            "the session's 2 LLM calls are spent",
        )
        assert counted.ask("a", messages[0], max_tokens=10) == ("fine", None)  # cached
        assert counted.ask("b", messages[2], max_tokens=10) == ("fine", None)  # its own budget
        assert len(seen) == 3
    # The session's clock: the first call took 0.4 s of its 0.5, so the next may wait 0.1 s,
    # and the server takes a second: it times out, and then the time is spent.
    ticks = iter([0.0, 0.4, 0.4, 0.5])
    with chat_server([(200, _reply("fine"), 0.0), (200, _reply("late"), 1.0)]) as (url, seen):
        timed = BoundedChat(
            ChatModel(url, "tiny", timeout=5.0),
            _Replies(),
            max_calls=10,
            max_seconds=0.5,
            clock=lambda: next(ticks),
        )
        assert timed.ask("a", messages[0], max_tokens=10) == ("fine", None)
        reply, why = timed.ask("a", messages[1], max_tokens=10)
        assert reply is None and "did not answer within 0.1 s" in why
        assert timed.ask("a", messages[2], max_tokens=10) == (
            None,
            "the session's 0.5 s of LLM time are spent",
        )
    assert BoundedChat(None, _Replies(), max_calls=1, max_seconds=1).ask(
        "a", messages[0], max_tokens=10
    ) == (None, None)
