"""A message's fingerprint is its identity across resends: the same when the client sends it
back with fields of its own, the same for a reply streamed or whole, different in another
conversation; and what a capsule keeps of a message never holds an image."""

from __future__ import annotations

import json

from capy.bench.chat_upstream import TOOL_CALL, completion, stream_events
from capy.proxy.messages import chain, conversation_id, message_text, reply_fingerprint
from capy.proxy.replies import reply_from_json, reply_from_stream
from capy.rules import load_rules

SHARED = ("system", "developer")
SYSTEM = {"role": "system", "content": "Be brief."}
ASK = {"role": "user", "content": "What failed?"}


def test_a_resent_history_keeps_its_fingerprints():
    first = chain([SYSTEM, ASK], SHARED)
    again = chain([SYSTEM, ASK, {"role": "assistant", "content": "x"}], SHARED)
    assert [m.fingerprint for m in again[:2]] == [m.fingerprint for m in first]
    assert conversation_id(first) == conversation_id(again)


def test_the_reply_has_the_fingerprint_its_resent_copy_will_have():
    history = chain([SYSTEM, ASK], SHARED)
    reply = reply_from_json(json.dumps(completion("It was the parser.")).encode())
    # What the SDK sends back: its own fields beside role and content.
    resent = {**reply, "refusal": None, "annotations": [], "audio": None, "function_call": None}
    assert reply_fingerprint(history, reply) == chain([SYSTEM, ASK, resent], SHARED)[2].fingerprint


def test_a_streamed_reply_is_the_same_message_as_the_whole_one():
    text = "It was the parser, and the fix is one line."
    streamed = reply_from_stream(list(stream_events(text, with_tool=False)))
    whole = reply_from_json(json.dumps(completion(text)).encode())
    history = chain([ASK], SHARED)
    assert streamed["content"] == text
    assert reply_fingerprint(history, streamed) == reply_fingerprint(history, whole)


def test_streamed_tool_call_pieces_are_put_together():
    streamed = reply_from_stream(list(stream_events("", with_tool=True)))
    [call] = streamed["tool_calls"]
    assert call["function"] == TOOL_CALL and call["id"] == "call_1"
    call_body = {"id": "call_1", "type": "function", "function": TOOL_CALL}
    whole = reply_from_json(json.dumps(completion(None, [call_body])).encode())
    history = chain([ASK], SHARED)
    assert reply_fingerprint(history, streamed) == reply_fingerprint(history, whole)


def test_the_same_words_in_another_conversation_are_another_message():
    one = chain([SYSTEM, ASK, {"role": "user", "content": "thanks"}], SHARED)
    two = chain(
        [SYSTEM, {"role": "user", "content": "Other?"}, {"role": "user", "content": "thanks"}],
        SHARED,
    )
    assert one[2].fingerprint != two[2].fingerprint
    assert conversation_id(one) != conversation_id(two)
    # A shared role's message is itself wherever it stands.
    assert one[0].fingerprint == two[0].fingerprint


def test_an_image_is_a_placeholder_and_text_parts_are_kept():
    pack = load_rules().view("capsules").proxy
    message = {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in this picture?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 5000}},
        ],
    }
    text = message_text(message, pack.non_text_part)
    assert text == "What is in this picture?\n[image_url not kept]"


def test_every_recorded_role_has_a_known_kind_and_a_bound():
    view = load_rules().view("capsules")
    for role, kind in view.proxy.roles.items():
        assert kind in view.kinds, role
        assert kind in view.proxy.bounds, kind
    assert set(view.proxy.shared_roles) <= set(view.proxy.roles)


def test_a_reply_that_is_not_a_completion_is_no_message():
    assert reply_from_json(b"<html>") is None
    assert reply_from_json(b'{"choices": []}') is None
    assert reply_from_stream([b"data: not json\n\n", b"data: [DONE]\n\n"]) is None
