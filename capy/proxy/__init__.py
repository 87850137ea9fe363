"""`capy proxy`: an OpenAI-compatible proxy on loopback that records chat completions as
capsules.

    from capy.proxy import serve_proxy
    serve_proxy(ProxyOptions(upstream="http://127.0.0.1:8000/v1"), announce=print)

- `capy.proxy.server`: the Starlette app that relays requests with httpx.
- `capy.proxy.recorder`: the thread that records exchanges off the reply's path.
- `capy.proxy.recording`: an exchange as redacted, bounded spool records.
- `capy.proxy.messages`: a message's fingerprint (each is recorded once) and its text.
- `capy.proxy.replies`: the reply as one message, from JSON or from a relayed stream.
- `capy.proxy.injection`: `--inject-recall`, a recall brief before the user's last message.

The server binds 127.0.0.1 only; there is no option to listen elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

LOOPBACK = "127.0.0.1"
BACKLOG = 128


class ProxyError(Exception):
    """A proxy that cannot start as asked; `message` says why and what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class ProxyOptions:
    upstream: str
    port: int | None = None  # None: the pack's default_port; 0: any free port
    timeout: float | None = None  # None: the pack's read_seconds
    project_dir: Path | None = None
    inject_recall: int | None = None  # a recall brief's token budget; None: no brief


def checked_upstream(url: str) -> str:
    """`url` as the upstream's API root, or a `ProxyError` saying how to write it."""
    import httpx

    try:
        parsed = httpx.URL(url.strip())
    except (httpx.InvalidURL, TypeError):
        parsed = None
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
        raise ProxyError(
            f"--upstream {url!r} is not an http(s) URL: give the API root, "
            "e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1"
        )
    return str(parsed).rstrip("/")


def shown_upstream(url: str) -> str:
    """The upstream as it may be printed: any user:password in the URL is left out."""
    import httpx

    parsed = httpx.URL(url)
    return str(parsed.copy_with(username=None, password=None)) if parsed.userinfo else url


def bind_loopback(port: int):
    """A listening socket on 127.0.0.1:`port` (0: a free port)."""
    import socket

    # IPPROTO_TCP named, not left 0: asyncio turns Nagle off (TCP_NODELAY) only on sockets that
    # say they are TCP, and with Nagle on, a reply's headers and body go a delayed ACK apart
    # (about 40 ms a request).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((LOOPBACK, port))
    except OSError as problem:
        sock.close()
        raise ProxyError(
            f"cannot listen on {LOOPBACK}:{port} ({problem.strerror or problem}): "
            "pick another port with --port"
        ) from None
    sock.listen(BACKLOG)
    return sock


def serve_proxy(options: ProxyOptions, announce: Callable[[str], None]) -> None:
    """Run the proxy until interrupted (SIGINT or SIGTERM); what is queued is recorded first."""
    import sys

    import uvicorn

    from capy.proxy.record_process import RecorderProcess
    from capy.proxy.server import ProxySettings, build_app
    from capy.rules import load_rules

    upstream = checked_upstream(options.upstream)
    project_dir = options.project_dir or Path.cwd()
    rules = load_rules(project_dir)
    pack = rules.view("capsules").proxy
    if pack is None:
        raise ProxyError("the capsules pack in force has no proxy section: restore it")

    def log(line: str) -> None:
        print(f"capy proxy: {line}", file=sys.stderr, flush=True)

    niceness = rules.view("capsules").worker.background_niceness
    recorder = RecorderProcess(project_dir.resolve(), niceness, log)
    injector = None
    if options.inject_recall is not None:
        from capy.proxy.injection import RecallInjector

        injector = RecallInjector(project_dir, rules, options.inject_recall, log)
    settings = ProxySettings(
        upstream=upstream,
        rules=pack,
        read_seconds=options.timeout or pack.timeouts.read_seconds,
        recorder=recorder,
        injector=injector,
    )
    sock = bind_loopback(pack.default_port if options.port is None else options.port)
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        build_app(settings),
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=int(pack.timeouts.write_seconds),
    )
    announce(f"capy proxy: http://{LOOPBACK}:{port}/v1 -> {shown_upstream(upstream)}")
    uvicorn.Server(config).run(sockets=[sock])
