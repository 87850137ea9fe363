"""The summarise stage (per scope): hierarchical summaries of each session with enough capsules,
and of the whole scope (capy.capsules.summarising).

With a configured chat model, `prepare_scope` asks it for each summary outside any transaction
and caches the reply by prompt hash (llm_replies); `run_scope` then writes every summary from
the cache, falling back to the extractive summary for any reply it lacks, so the write
transaction never waits on the network and a rebuild reuses the replies.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from capy.capsules.model import Scope
from capy.capsules.sqlite.summaries import cached_reply, keep_reply, replace_summaries, scope_pieces
from capy.capsules.stages import StageContext
from capy.capsules.summarising import Piece, extractive, plan


def prepare_scope(context: StageContext, scope: Scope) -> int:
    """Ask the chat model for the summaries not cached yet; the number of replies fetched."""
    if context.llm is None:
        return 0
    from capy.llm import LlmError

    fetched = 0

    def ask(pieces: Sequence[Piece]) -> tuple[str, str]:
        nonlocal fetched
        messages, key = _request(context, pieces)
        if cached_reply(context.conn, key) is None:
            try:
                reply = context.llm.complete(messages, max_tokens=_settings(context).llm.max_tokens)
            except LlmError:
                return _extractive(context, pieces)  # this round goes without; the next retries
            keep_reply(context.conn, key, context.llm.model, reply)
            fetched += 1
        return "", ""

    _plan(context, scope, ask)
    return fetched


def run_scope(context: StageContext, scope: Scope) -> int:
    """Replace the scope's summaries; the number written."""
    rows = _plan(context, scope, partial(_from_cache_or_extractive, context))
    replace_summaries(context.conn, scope, rows, context.version)
    return len(rows)


def _plan(context: StageContext, scope: Scope, write):  # type: ignore[no-untyped-def]
    sessions, everything = scope_pieces(context.conn, scope)
    return plan(sessions, everything, _settings(context), write)


def _from_cache_or_extractive(context: StageContext, pieces: Sequence[Piece]) -> tuple[str, str]:
    if context.llm is not None:
        _, key = _request(context, pieces)
        reply = cached_reply(context.conn, key)
        if reply is not None:
            return reply, f"llm:{context.llm.model}"
    return _extractive(context, pieces)


def _extractive(context: StageContext, pieces: Sequence[Piece]) -> tuple[str, str]:
    stopwords = frozenset(context.rules.view("search").stopwords.english)
    return extractive(pieces, _settings(context), stopwords)


def _request(context: StageContext, pieces: Sequence[Piece]) -> tuple[list[dict[str, str]], str]:
    settings = _settings(context).llm
    text = "\n".join(f"[{piece.kind}] {' '.join(piece.text.split())}" for piece in pieces)
    messages = [
        {"role": "system", "content": settings.system},
        {"role": "user", "content": text[: settings.max_input_chars]},
    ]
    return messages, context.llm.prompt_hash(messages, max_tokens=settings.max_tokens)


def _settings(context: StageContext):  # type: ignore[no-untyped-def]
    return context.rules.view("capsules").summaries
