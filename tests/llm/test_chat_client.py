"""The OpenAI-compatible chat client against a real HTTP server on loopback with scripted
replies (good, malformed, slow, failing), and summaries through it cached by prompt hash."""

from __future__ import annotations

import json

import pytest

from capy.llm import ChatModel, LlmError
from tests.llm.chat_server import GOOD, chat_server

MESSAGES = [{"role": "user", "content": "summarise this"}]


def test_a_good_reply_is_its_message_text():
    with chat_server([(200, json.dumps(GOOD).encode(), 0)]) as (url, seen):
        reply = ChatModel(url, "tiny", "sk-test-key", timeout=5).complete(MESSAGES, max_tokens=50)
    assert reply == "A short summary."
    [request] = seen
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer sk-test-key"
    assert request["body"]["model"] == "tiny" and request["body"]["max_tokens"] == 50


@pytest.mark.parametrize(
    "body",
    [b"not json", b'{"choices": []}', b'{"choices": [{"message": {"content": 3}}]}', b"{}"],
)
def test_a_malformed_reply_is_refused(body):
    with (
        chat_server([(200, body, 0)]) as (url, _),
        pytest.raises(LlmError, match="not an OpenAI-compatible chat completion"),
    ):
        ChatModel(url, "tiny", timeout=5).complete(MESSAGES, max_tokens=10)


def test_a_failing_server_is_one_sentence_without_the_key():
    with (
        chat_server([(500, b'{"error": "boom"}', 0)]) as (url, _),
        pytest.raises(LlmError) as caught,
    ):
        ChatModel(url, "tiny", "sk-secret-value", timeout=5).complete(MESSAGES, max_tokens=10)
    assert "answered HTTP 500" in str(caught.value) and "sk-secret" not in str(caught.value)


def test_a_slow_server_times_out():
    with (
        chat_server([(200, json.dumps(GOOD).encode(), 2.0)]) as (url, _),
        pytest.raises(LlmError, match=r"did not answer within 0\.3 s"),
    ):
        ChatModel(url, "tiny", timeout=0.3).complete(MESSAGES, max_tokens=10)


def test_nobody_listening_is_one_sentence():
    with pytest.raises(LlmError, match=r"could not reach the chat model at http://127\.0\.0\.1:9"):
        ChatModel("http://127.0.0.1:9/v1", "tiny", timeout=2).complete(MESSAGES, max_tokens=10)
