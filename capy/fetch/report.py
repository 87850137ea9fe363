"""The markdown a fetch call returns: a summary line, then per URL what was stored, a short
preview and the exact search call to use next. Never the page itself."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from capy.fetch.outcome import Status, UrlOutcome
from capy.units import human_bytes

if TYPE_CHECKING:
    from capy.api.hints import Hints

_SUMMARY_WORDS = {
    Status.INDEXED: "indexed",
    Status.UNCHANGED: "unchanged since the last fetch",
    Status.CACHED: "from the cache",
    Status.ROUTED: "sent to the gh/glab CLI",
    Status.FAILED: "failed",
}


def render_reply(
    outcomes: Sequence[UrlOutcome],
    *,
    kind: str,
    searched_by_default: bool,
    shared_source: str | None,
    hints: Hints,
) -> str:
    """`kind` is the kind sources were stored as; unless searched by default, every search
    call shown includes it. `hints` words the calls for the reply's reader."""
    include = None if searched_by_default else kind
    counts = Counter(outcome.status for outcome in outcomes)
    parts = [f"{counts[status]} {_SUMMARY_WORDS[status]}" for status in Status if counts[status]]
    noun = "URL" if len(outcomes) == 1 else "URLs"
    lines = [f"# Fetch: {len(outcomes)} {noun} ({', '.join(parts)})"]
    for outcome in outcomes:
        lines += ["", f"## {outcome.url}", *_section(outcome, include, hints)]
    stored = [o for o in outcomes if o.label and o.status in _STORED]
    if shared_source and len(stored) > 1:
        lines += ["", "Search them all: " + _search_call(f"{shared_source} *", include, hints)]
    return "\n".join(lines) + "\n"


_STORED = (Status.INDEXED, Status.UNCHANGED, Status.CACHED)


def _section(outcome: UrlOutcome, include: str | None, hints: Hints) -> list[str]:
    if outcome.status is Status.FAILED:
        return [f"Not fetched: {outcome.message.rstrip('.')}."]
    if outcome.status is Status.ROUTED:
        return [f"Not fetched: {outcome.message}"]
    lines = [_stored_line(outcome, hints)]
    if outcome.title and f"# {outcome.title}" not in outcome.preview:
        lines.append(f"Title: {outcome.title}")
    if outcome.redirected_to:
        lines.append(f"Redirected to: {outcome.redirected_to}")
    if outcome.capped_at is not None:
        lines.append(
            f"Cut to the {human_bytes(outcome.capped_at)} source cap (retention pack "
            "size.max_source_bytes): a marker shows where text was left out."
        )
    if outcome.redactions:
        lines.append(f"Secrets masked before storing: {outcome.redactions}")
    if outcome.preview:
        lines += ["Preview:", "```text", *outcome.preview, "```"]
    lines.append("Search: " + _search_call(outcome.label or outcome.url, include, hints))
    return lines


def _stored_line(outcome: UrlOutcome, hints: Hints) -> str:
    what = outcome.content_type + (" from HTML" if outcome.converted_from_html else "")
    chunks = f"{outcome.chunk_count} chunk{'' if outcome.chunk_count == 1 else 's'}"
    stored = f"source `{outcome.label}` ({outcome.kind}, {what}): {chunks}, "
    stored += human_bytes(outcome.stored_bytes)
    if outcome.status is Status.CACHED:
        age = human_duration(outcome.cache_age_seconds or 0)
        ttl = human_duration(outcome.cache_ttl_seconds or 0)
        return (
            f"From the cache (fetched {age} ago; this URL is kept {ttl}; {hints.refetch()} "
            f"refetches): {stored}."
        )
    fetched = f" from {human_bytes(outcome.fetched_bytes)} fetched"
    if outcome.status is Status.UNCHANGED:
        return f"Fetched again, content unchanged: {stored}{fetched}."
    return f"Indexed as {stored}{fetched}."


def _search_call(source: str, include: str | None, hints: Hints) -> str:
    call = hints.search(["<what you need>"], source=source, kinds=[include] if include else [])
    return f"`{call}`"


def human_duration(seconds: float) -> str:
    # Days only from two on: "24 h" reads better than "1 d" for the default TTL.
    for unit, size, shown_from in (("d", 86400, 172800), ("h", 3600, 3600), ("min", 60, 60)):
        if seconds >= shown_from:
            value = seconds / size
            shown = f"{value:.0f}" if value >= 10 or value == int(value) else f"{value:.1f}"
            return f"{shown} {unit}"
    return f"{int(seconds)} s"
