"""The proxy's tests run it as `capy proxy` (a real process) in front of a real scripted chat
server on loopback, and drive it with the official `openai` client."""

from __future__ import annotations

from contextlib import ExitStack

import pytest

from capy.bench.chat_upstream import chat_upstream
from capy.bench.proxy_process import running_proxy

API_KEY = "sk-proxytest-Zq8vW3nR5tY7uI9oP1aS2dF4gH6jK8lZ"


@pytest.fixture
def upstream():
    with chat_upstream() as served:
        yield served


@pytest.fixture
def start_proxy(warm_project, tmp_path):
    """`start_proxy(upstream_url, *extra)`: a running `capy proxy` (stopped at the test's end)."""
    with ExitStack() as stack:

        def start(url: str, *extra: str):
            logs = tmp_path / f"logs-{len(stack._exit_callbacks)}"
            return stack.enter_context(running_proxy(url, warm_project, None, logs, *extra))

        yield start


def client(proxy, **options):
    import openai

    return openai.OpenAI(base_url=proxy.base_url, api_key=API_KEY, max_retries=0, **options)
