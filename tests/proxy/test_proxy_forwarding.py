"""What a client sees through `capy proxy`: the upstream's replies, JSON and streamed chunk by
chunk, the key passed through, and every upstream failure as a status the client knows."""

from __future__ import annotations

import itertools
import time

import httpx
import openai
import pytest

from capy.bench.chat_upstream import CHUNKS, SLOW_CHUNK_S, reply_text
from tests.proxy.conftest import API_KEY, client

ASK = [{"role": "user", "content": "What does the parser do?"}]


def test_a_json_reply_reaches_the_client_and_the_key_reaches_the_upstream(upstream, start_proxy):
    url, seen = upstream
    proxy = start_proxy(url)
    reply = client(proxy).chat.completions.create(model="json", messages=ASK)
    assert reply.choices[0].message.content == reply_text({"messages": ASK})
    [request] = seen
    assert request["path"] == "/v1/chat/completions"
    assert request["auth"] == f"Bearer {API_KEY}"
    assert request["body"] == {"model": "json", "messages": ASK}


def test_a_streamed_reply_is_relayed_chunk_by_chunk_as_it_arrives(upstream, start_proxy):
    url, _ = upstream
    proxy = start_proxy(url)
    started = time.monotonic()
    stream = client(proxy).chat.completions.create(model="slow-stream", messages=ASK, stream=True)
    arrivals, text = [], []
    for chunk in stream:
        arrivals.append(time.monotonic() - started)
        if chunk.choices and chunk.choices[0].delta.content:
            text.append(chunk.choices[0].delta.content)
    assert "".join(text) == reply_text({"messages": ASK})
    # The upstream waits between events; a proxy that buffered would deliver them all at once.
    total = arrivals[-1]
    assert arrivals[0] < total - CHUNKS * SLOW_CHUNK_S * 0.5
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    assert sum(gap >= SLOW_CHUNK_S * 0.5 for gap in gaps) >= CHUNKS // 2


def test_the_async_client_streams_through_the_proxy(upstream, start_proxy):
    import asyncio

    url, _ = upstream
    proxy = start_proxy(url)

    async def ask() -> str:
        async with openai.AsyncOpenAI(
            base_url=proxy.base_url, api_key=API_KEY, max_retries=0
        ) as aclient:
            stream = await aclient.chat.completions.create(
                model="stream", messages=ASK, stream=True
            )
            return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    assert asyncio.run(ask()) == reply_text({"messages": ASK})


def test_an_upstream_error_reaches_the_client_as_it_was(upstream, start_proxy):
    url, _ = upstream
    proxy = start_proxy(url)
    with pytest.raises(openai.InternalServerError) as caught:
        client(proxy).chat.completions.create(model="fail", messages=ASK)
    assert caught.value.status_code == 500 and "scripted failure" in str(caught.value)


def test_a_reply_that_is_not_json_is_a_clear_bad_gateway(upstream, start_proxy):
    url, _ = upstream
    proxy = start_proxy(url)
    with pytest.raises(openai.APIStatusError) as caught:
        client(proxy).chat.completions.create(model="malformed", messages=ASK)
    assert caught.value.status_code == 502
    assert "not a JSON chat completion" in caught.value.message


def test_a_slow_upstream_is_a_gateway_timeout(upstream, start_proxy):
    url, _ = upstream
    proxy = start_proxy(url, "--timeout", "0.5")
    started = time.monotonic()
    with pytest.raises(openai.APIStatusError) as caught:
        client(proxy).chat.completions.create(model="slow", messages=ASK)
    assert caught.value.status_code == 504
    assert "did not answer within 0.5 s" in caught.value.message
    assert time.monotonic() - started < 2.5


def test_an_upstream_nobody_listens_on_is_a_clear_bad_gateway(start_proxy):
    import socket

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    proxy = start_proxy(f"http://127.0.0.1:{port}/v1")
    with pytest.raises(openai.APIStatusError) as caught:
        client(proxy).chat.completions.create(model="json", messages=ASK)
    assert caught.value.status_code == 502
    assert f"could not reach the upstream http://127.0.0.1:{port}/v1" in caught.value.message


def test_other_paths_pass_through_unrecorded(upstream, start_proxy):
    url, seen = upstream
    proxy = start_proxy(url)
    models = client(proxy).models.list()
    assert [model.id for model in models.data] == ["json"]
    assert seen[0]["path"] == "/v1/models" and seen[0]["auth"] == f"Bearer {API_KEY}"


@pytest.mark.parametrize(
    "headers",
    [{"Host": "attacker.example:8788"}, {"Origin": "https://attacker.example"}],
    ids=["rebound host", "foreign origin"],
)
def test_requests_not_addressed_to_this_machine_are_refused(upstream, start_proxy, headers):
    url, seen = upstream
    proxy = start_proxy(url)
    reply = httpx.post(
        proxy.base_url + "/chat/completions",
        json={"model": "json", "messages": ASK},
        headers=headers,
    )
    assert reply.status_code == 403
    assert reply.json()["error"]["code"] == "forbidden_host"
    assert seen == []


def test_the_proxy_listens_on_loopback_only(upstream, start_proxy):
    url, _ = upstream
    proxy = start_proxy(url)
    port = int(proxy.base_url.rsplit(":", 1)[1].split("/")[0])
    listening = _listening_addresses(port)
    assert listening == {"127.0.0.1"}


def _listening_addresses(port: int) -> set[str]:
    """Local addresses with a listening TCP socket on `port` (from /proc/net/tcp and tcp6)."""
    import socket
    from pathlib import Path

    found = set()
    for table, family in (("tcp", socket.AF_INET), ("tcp6", socket.AF_INET6)):
        path = Path("/proc/net") / table
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, port_hex = local.split(":")
            if state != "0A" or int(port_hex, 16) != port:
                continue
            raw = bytes.fromhex(address)
            if family == socket.AF_INET:
                found.add(socket.inet_ntop(family, raw[::-1]))
            else:
                words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
                found.add(socket.inet_ntop(family, words))
    return found
