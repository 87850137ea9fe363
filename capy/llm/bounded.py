"""A chat model used under a budget per session: at most so many calls and so many seconds of
waiting, each reply cached by its prompt hash so that asking again (a rebuild replaying the
same capsules) reads the cache instead of calling.

Every way a call can fail (no budget left, no answer in time, an HTTP error, a reply that is
not a chat completion) comes back as a reason, never an exception: callers fall back to what
they do without a model and log the reason.

    chat = BoundedChat(model, cache, max_calls=6, max_seconds=60)
    reply, why = chat.ask("session-1", messages, max_tokens=200)
    if reply is None: ...  # `why` says why, or is None when no model is configured
"""

from __future__ import annotations

import time
from collections import Counter
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from capy.llm import ChatModel, Message


class ReplyCache(Protocol):
    def get(self, prompt_hash: str) -> str | None: ...

    def put(self, prompt_hash: str, model: str, reply: str) -> None: ...


class BoundedChat:
    """`model` (None: no model configured, cached replies are not read either, since their
    key names the model) under per-session limits, with replies cached in `cache`."""

    def __init__(
        self,
        model: ChatModel | None,
        cache: ReplyCache,
        *,
        max_calls: int,
        max_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.model = model
        self.cache = cache
        self.max_calls = max_calls
        self.max_seconds = max_seconds
        self.clock = clock
        self.calls: Counter[str] = Counter()
        self.seconds: Counter[str] = Counter()

    def ask(
        self, session: str, messages: Sequence[Message], *, max_tokens: int
    ) -> tuple[str | None, str | None]:
        """The reply to `messages`, from the cache or the model, or None and why not (None
        too when no model is configured: that is no failure)."""
        if self.model is None:
            return None, None
        key = self.model.prompt_hash(messages, max_tokens=max_tokens)
        cached = self.cache.get(key)
        if cached is not None:
            return cached, None
        if self.calls[session] >= self.max_calls:
            return None, f"the session's {self.max_calls} LLM calls are spent"
        left = self.max_seconds - self.seconds[session]
        if left <= 0:
            return None, f"the session's {self.max_seconds:g} s of LLM time are spent"
        from dataclasses import replace

        from capy.llm import LlmError

        # A slow server waits no longer than what is left of the session's time.
        model = replace(self.model, timeout=min(self.model.timeout, left))
        self.calls[session] += 1
        started = self.clock()
        try:
            reply = model.complete(messages, max_tokens=max_tokens)
        except LlmError as error:
            return None, str(error)
        finally:
            self.seconds[session] += self.clock() - started
        self.cache.put(key, self.model.model, reply)
        return reply, None
