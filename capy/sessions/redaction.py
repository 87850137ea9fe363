"""Secret redaction of a parsed session, before any of it is rendered, indexed or archived.

The indexer redacts again (masks are on the secrets pack's allowlist, so the second pass changes
nothing); redacting here, before results are capped, keeps a secret cut in half by a cap from
slipping past the scanner, and keeps secrets out of everything built from the model.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from capy.security.redaction import mask_for

if TYPE_CHECKING:
    from capy.rules.views.secrets import SecretsPack
    from capy.sessions.model import Session

# Message kinds a transcript never renders (see capy.sessions.transcript).
UNINDEXED_KINDS = frozenset({"meta", "compact_summary"})
# Texts are scanned joined, in one pass: a call per message costs more than the scan itself.
_SEPARATOR = "\n\n"


def redact_session(
    session: Session, secrets: SecretsPack, *, indexed_only: bool = False
) -> dict[str, int]:
    """Mask every secret in the session's (and its sidecars') texts in place; counts per rule.

    `indexed_only` cleans just what a transcript renders (prompts, replies, call summaries,
    results, diffs) and leaves reasoning, raw tool inputs and harness text as they are: the
    sweep throws the rest away, and scanning is the slowest step of a sweep.
    """
    texts: list[str] = []

    def collect(text: str) -> str:
        texts.append(text)
        return text

    _rewrite(session, collect, indexed_only)
    cleaned, counts = redact_texts(texts, secrets)
    replacements = iter(cleaned)
    _rewrite(session, lambda _text: next(replacements), indexed_only)
    return counts


def redact_texts(texts: list[str], secrets: SecretsPack) -> tuple[list[str], dict[str, int]]:
    """Each text with its secrets masked, found in one scan of all of them joined."""
    joined = _SEPARATOR.join(texts)
    findings = secrets.find_secrets(joined) if joined.strip() else []
    if not findings:
        return list(texts), {}
    starts, position = [], 0
    for text in texts:
        starts.append(position)
        position += len(text) + len(_SEPARATOR)
    per_text: dict[int, list[tuple[int, int, str]]] = {}
    for finding in findings:
        index = bisect_right(starts, finding.start) - 1
        base = starts[index]
        end = min(finding.end, base + len(texts[index]))  # a find never leaks into the next
        per_text.setdefault(index, []).append((finding.start - base, end - base, finding.rule_id))
    cleaned = list(texts)
    for index, spans in per_text.items():
        cleaned[index] = _splice(texts[index], spans)
    counts = Counter(finding.rule_id for finding in findings)
    return cleaned, dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def _splice(text: str, spans: list[tuple[int, int, str]]) -> str:
    parts, cursor = [], 0
    for start, end, rule_id in sorted(spans):
        if start < cursor:
            continue
        parts.append(text[cursor:start])
        parts.append(mask_for(rule_id))
        cursor = end
    parts.append(text[cursor:])
    return "".join(parts)


def _rewrite(session: Session, clean: Callable[[str], str], indexed_only: bool) -> None:
    """Apply `clean` to every text field, in a fixed order (collect and replace rely on it)."""
    for part in session.all_sessions():
        if part.title:
            part.title = clean(part.title)
        for message in part.messages:
            if indexed_only and message.kind in UNINDEXED_KINDS:
                continue
            message.text = clean(message.text)
            if not indexed_only:
                message.thinking = clean(message.thinking)
            message.tool_calls = [
                replace(
                    call,
                    input=call.input if indexed_only else _clean_value(call.input, clean),
                    summary=clean(call.summary),
                )
                for call in message.tool_calls
            ]
            if message.result is not None:
                result = message.result
                message.result = replace(
                    result,
                    text=clean(result.text),
                    diff=clean(result.diff),
                    summary=clean(result.summary),
                )
        if not indexed_only:
            part.compactions = [replace(c, summary=clean(c.summary)) for c in part.compactions]


def _clean_value(value: Any, clean: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {key: _clean_value(item, clean) for key, item in value.items()}
    if isinstance(value, list):
        return [_clean_value(item, clean) for item in value]
    return value
