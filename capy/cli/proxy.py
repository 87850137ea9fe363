"""`capy proxy`: the OpenAI-compatible proxy that records chat completions as capsules."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from cyclopts import App, Parameter

# Shown under `capy proxy --help`: what a user must know before pointing a program at it.
WHAT_IT_KEEPS = """\
Listens on 127.0.0.1 only. Point your client's base URL at the address it prints (for example
http://127.0.0.1:8788/v1) and keep your API key in the client: the Authorization header passes
through to the upstream untouched. Streamed replies are relayed chunk by chunk as they arrive;
other API paths (models, embeddings) pass through unrecorded.

Recorded, as capsules with source proxy in this project's capsule log, after the reply went
out: the text of each chat message the first time the proxy sees it (clients resend the whole
history every turn; each message is kept once, a system prompt once in all) and the text and
tool calls of each reply's first choice, with the conversation id, model name and role.
Content is redacted by the secrets pack and bounded (rules/capsules.yaml, proxy) before it is
written anywhere, the capture spool included.

With --inject-recall BUDGET, a recall brief of at most BUDGET tokens (what capy recall finds
in this project's capsules for the user's last message) goes to the upstream as a system
message just before that message; it is left out when nothing relevant is found, and never
recorded. The pipeline's background worker runs meanwhile, so new capsules become recallable.

Never stored or logged: the API key and every other request header, images, audio and files
(a placeholder stands in for them), request settings other than the model, and exchanges
that failed or broke off."""

app = App(name="proxy", help_epilogue=WHAT_IT_KEEPS)


@app.default
def proxy(
    *,
    upstream: Annotated[str, Parameter(name="--upstream")],
    port: Annotated[int | None, Parameter(name="--port")] = None,
    timeout: Annotated[float | None, Parameter(name="--timeout")] = None,
    project: Annotated[Path | None, Parameter(name="--project")] = None,
    inject_recall: Annotated[int | None, Parameter(name="--inject-recall")] = None,
) -> int:
    """Forward OpenAI-compatible chat completions to UPSTREAM and record them as capsules.

    Parameters
    ----------
    upstream
        The upstream's API root, e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1.
    port
        The port to listen on (default: the pack's default_port, 8788; 0 picks a free one).
    timeout
        Seconds to wait for each piece of the upstream's reply (default: the pack's 600).
    project
        The project whose capsule log records the exchanges (default: the current one).
    inject_recall
        Add a recall brief of at most this many tokens before the user's last message.
    """
    from capy.cli.output import error_line
    from capy.proxy import ProxyError, ProxyOptions, serve_proxy

    if timeout is not None and timeout <= 0:
        error_line("--timeout must be a positive number of seconds")
        return 2
    if port is not None and not 0 <= port <= 65535:
        error_line("--port must be between 0 and 65535")
        return 2
    if inject_recall is not None and inject_recall < 1:
        error_line("--inject-recall takes a token budget: a positive whole number, such as 800")
        return 2
    options = ProxyOptions(
        upstream=upstream,
        port=port,
        timeout=timeout,
        project_dir=project,
        inject_recall=inject_recall,
    )
    try:
        serve_proxy(options, announce=lambda line: print(line, flush=True))
    except ProxyError as problem:
        error_line(problem.message)
        return 2
    return 0
