"""The proxy's HTTP face: a Starlette app that relays every request to the upstream with
httpx and hands each chat completion it relayed to the recorder.

A chat completion's body goes to the upstream byte for byte (unless a recall brief is added),
its headers too, minus those of one hop (the pack's `drop_headers`). A streamed reply is relayed
chunk by chunk as it arrives; a JSON reply once whole. The recorder gets the exchange after the
reply went out (a Starlette background task), so recording adds nothing to what the client
waits for. An upstream that cannot be reached, times out or answers a chat completion with
something that is not JSON is an OpenAI-shaped error with a status the client's library knows
(502, 504); an upstream's own error status and body reach the client as they are.
"""

from __future__ import annotations

import time
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from capy.proxy.recording import Exchange

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from capy.proxy.injection import RecallInjector
    from capy.proxy.record_process import RecorderProcess
    from capy.rules.views.capsules import Proxy

CHAT_PATH = "/chat/completions"
# Clients point at the proxy as they would at the upstream's API root: `/v1/chat/completions`
# here is `<upstream>/chat/completions` there.
VERSION_PREFIX = "/v1"
EVENT_STREAM = "text/event-stream"
ERROR_TYPE = "capy_proxy_error"
METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


@dataclass
class ProxySettings:
    upstream: str  # the upstream's API root, e.g. https://api.openai.com/v1
    rules: Proxy
    read_seconds: float
    recorder: RecorderProcess | None = None
    # Adds a recall brief to a chat request's body (None: the body goes as it came).
    injector: RecallInjector | None = None


def openai_error(status: int, message: str, code: str) -> JSONResponse:
    """An error in the shape OpenAI's libraries read (`error.message` becomes the exception's)."""
    body = {"error": {"message": message, "type": ERROR_TYPE, "param": None, "code": code}}
    return JSONResponse(body, status_code=status)


def build_app(settings: ProxySettings) -> Starlette:
    rules = settings.rules
    upstream = settings.upstream.rstrip("/")
    drop_request = frozenset(rules.drop_headers.request)
    drop_response = frozenset(rules.drop_headers.response)
    hosts = frozenset(host.lower() for host in rules.loopback_hosts)
    state: dict[str, httpx.AsyncHTTPTransport] = {}
    timeout = httpx.Timeout(
        connect=rules.timeouts.connect_seconds,
        read=settings.read_seconds,
        write=rules.timeouts.write_seconds,
        pool=rules.timeouts.connect_seconds,
    )
    extensions = {"timeout": timeout.as_dict()}

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        # Requests go straight to the client's transport (its connection pool): the client's
        # own steps (merging URLs, cookies, auth, redirects) cost a relayed call about a sixth
        # of the proxy's time and do nothing here. No environment proxies and no redirects:
        # the upstream is the one the user named.
        transport = httpx.AsyncHTTPTransport(trust_env=False)
        async with httpx.AsyncClient(
            transport=transport, timeout=timeout, trust_env=False, follow_redirects=False
        ):
            state["transport"] = transport
            if settings.recorder is not None:
                settings.recorder.start()
            if settings.injector is not None:
                settings.injector.start()
            try:
                yield
            finally:
                if settings.injector is not None:
                    settings.injector.close()
                if settings.recorder is not None:
                    settings.recorder.close(timeout=rules.timeouts.write_seconds)

    async def forward(request: Request) -> Response:
        refused = _refused_host(request, hosts)
        if refused is not None:
            return refused
        path = request.url.path
        if path == VERSION_PREFIX or path.startswith(VERSION_PREFIX + "/"):
            path = path[len(VERSION_PREFIX) :]
        url = upstream + path + (f"?{request.url.query}" if request.url.query else "")
        headers = [
            (name, value)
            for name, value in request.headers.items()
            if name.lower() not in drop_request
        ]
        body = await request.body()
        chat = request.method == "POST" and path == CHAT_PATH
        # The client's own request is what is recorded, never the brief added to it.
        exchange = Exchange(body) if chat and settings.recorder is not None else None
        if chat and settings.injector is not None:
            body = await settings.injector.amend(body)
        outgoing = httpx.Request(
            request.method, url, headers=headers, content=body, extensions=extensions
        )
        try:
            reply = await state["transport"].handle_async_request(outgoing)
            reply.request = outgoing
        except httpx.TimeoutException:
            return _timed_out(upstream, settings.read_seconds)
        except httpx.HTTPError as problem:
            return openai_error(
                502,
                f"capy proxy could not reach the upstream {upstream} "
                f"({type(problem).__name__}): check that it runs and that --upstream is right",
                "upstream_unreachable",
            )
        kept = [(k, v) for k, v in reply.headers.multi_items() if k.lower() not in drop_response]
        content_type = reply.headers.get("content-type", "")
        if reply.is_success and content_type.startswith(EVENT_STREAM):
            return _relayed_stream(reply, kept, exchange, settings.recorder)
        try:
            whole = await reply.aread()
        except httpx.TimeoutException:
            return _timed_out(upstream, settings.read_seconds)
        except httpx.HTTPError as problem:
            return openai_error(
                502,
                f"the upstream's reply broke off ({type(problem).__name__})",
                "upstream_broken",
            )
        finally:
            await reply.aclose()
        if chat and reply.is_success and not _is_json(whole):
            return openai_error(
                502,
                f"the upstream {upstream} answered HTTP {reply.status_code} with a body that is "
                "not a JSON chat completion: check that --upstream is an OpenAI-compatible API",
                "upstream_malformed",
            )
        task = None
        if exchange is not None and reply.is_success:
            exchange.reply.append(whole)
            exchange.replied_at = time.time()
            task = BackgroundTask(_submit, settings.recorder, exchange)
        return Response(whole, status_code=reply.status_code, headers=dict(kept), background=task)

    return Starlette(
        routes=[Route("/{path:path}", forward, methods=METHODS)],
        lifespan=lifespan,
    )


def _relayed_stream(
    reply: httpx.Response,
    headers: list[tuple[str, str]],
    exchange: Exchange | None,
    recorder: RecorderProcess | None,
) -> StreamingResponse:
    """Each chunk to the client as it arrives. A stream the upstream breaks off ends with an
    error event (the status went out with the first chunk) and is not recorded."""
    finished: list[bool] = []

    async def relay() -> AsyncIterator[bytes]:
        try:
            async for chunk in reply.aiter_bytes():
                if exchange is not None:
                    exchange.reply.append(chunk)
                yield chunk
            finished.append(True)
        except httpx.HTTPError as problem:
            yield _error_event(f"the upstream's stream broke off ({type(problem).__name__})")
        finally:
            await reply.aclose()

    async def record() -> None:
        if finished and exchange is not None and recorder is not None:
            exchange.streamed = True
            exchange.replied_at = time.time()
            recorder.submit(exchange)

    return StreamingResponse(
        relay(),
        status_code=reply.status_code,
        headers=dict(headers),
        background=BackgroundTask(record),
    )


async def _submit(recorder: RecorderProcess, exchange: Exchange) -> None:
    recorder.submit(exchange)


def _error_event(message: str) -> bytes:
    import json

    body = {"error": {"message": message, "type": ERROR_TYPE, "code": "upstream_broken"}}
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def _timed_out(upstream: str, seconds: float) -> JSONResponse:
    return openai_error(
        504,
        f"the upstream {upstream} did not answer within {seconds:g} s: "
        "raise --timeout if it is slow, or check that it runs",
        "upstream_timeout",
    )


def _is_json(body: bytes) -> bool:
    import json

    try:
        json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return False
    return True


def _refused_host(request: Request, hosts: frozenset[str]) -> Response | None:
    """A request whose Host (or a browser's Origin) is not a loopback name is refused: a web
    page reaching the proxy by DNS rebinding, or posting to it from another origin."""
    host = _host_name(request.headers.get("host", ""))
    origin = request.headers.get("origin")
    if host in hosts and (origin is None or _host_name(_origin_host(origin)) in hosts):
        return None
    return openai_error(
        403,
        "capy proxy answers only requests addressed to this machine (127.0.0.1 or localhost)",
        "forbidden_host",
    )


def _host_name(value: str) -> str:
    value = value.strip().lower()
    if value.startswith("["):
        return value[: value.find("]") + 1]
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _origin_host(origin: str) -> str:
    return origin.split("://", 1)[-1].split("/", 1)[0]
