"""A small client for OpenAI-compatible chat APIs (`POST {base_url}/chat/completions`).

capy never needs a chat model; where one helps (summaries) it is the one the user configured in
settings `llm`. Every failure is one `LlmError` sentence that names the server (never the key)
and what to check; a reply without a message text is refused, not guessed at.

    from capy.llm import chat_model_from_settings

    model = chat_model_from_settings(settings)  # None when none is configured
    reply = model.complete([{"role": "user", "content": "..."}], max_tokens=200)
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from capy.canonical import canonical_json

if TYPE_CHECKING:
    from capy.config.settings import Settings

Message = Mapping[str, str]


class LlmError(Exception):
    """A chat request that failed; the message says what happened and what to check."""


@dataclass(frozen=True)
class ChatModel:
    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 60.0

    @property
    def server(self) -> str:
        """Where requests go, without any path or credentials, for messages."""
        parts = urlsplit(self.base_url)
        return f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")

    def prompt_hash(self, messages: Sequence[Message], *, max_tokens: int) -> str:
        """The cache key of a request: the same model, messages and limit give the same reply."""
        payload = canonical_json(
            {"model": self.model, "messages": [dict(m) for m in messages], "max_tokens": max_tokens}
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def complete(self, messages: Sequence[Message], *, max_tokens: int) -> str:
        """The model's reply text (temperature 0), or an `LlmError`."""
        import httpx

        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        body = {
            "model": self.model,
            "messages": [dict(m) for m in messages],
            "max_tokens": max_tokens,
            "temperature": 0,
            "stream": False,
        }
        try:
            response = httpx.post(
                f"{self.base_url}/chat/completions",
                json=body,
                headers=headers,
                timeout=self.timeout,
            )
        except httpx.TimeoutException:
            raise LlmError(
                f"the chat model at {self.server} did not answer within {self.timeout:g} s: "
                "check the server, or raise llm.timeout"
            ) from None
        except httpx.HTTPError as error:
            raise LlmError(
                f"could not reach the chat model at {self.server} ({type(error).__name__}): "
                "check llm.base_url and that the server runs"
            ) from None
        if response.status_code >= 400:
            raise LlmError(
                f"the chat model at {self.server} answered HTTP {response.status_code}: "
                "check llm.model and llm.api_key (CAPY_LLM__API_KEY)"
            )
        return _reply_text(response.content, self.server)


def _reply_text(raw: bytes, server: str) -> str:
    refused = LlmError(
        f"the chat model at {server} sent a reply that is not an OpenAI-compatible chat "
        "completion: check that llm.base_url points at such an API (usually ending in /v1)"
    )
    try:
        data: Any = json.loads(raw)
    except ValueError:
        raise refused from None
    try:
        text = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise refused from None
    if not isinstance(text, str) or not text.strip():
        raise refused
    return text.strip()


def chat_model_from_settings(settings: Settings) -> ChatModel | None:
    """The configured chat model, or None when `llm.base_url` or `llm.model` is unset."""
    llm = settings.llm
    if not llm.configured:
        return None
    key = llm.api_key.get_secret_value() if llm.api_key is not None else None
    return ChatModel(str(llm.base_url), str(llm.model), key, llm.timeout)


__all__ = ["ChatModel", "LlmError", "chat_model_from_settings"]
