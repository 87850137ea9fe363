"""Turning what a caller hands the indexer into the text that may be stored.

Order matters: decode, refuse binary and empty input, redact secrets, then apply the size cap.
The cap is applied after redaction because redaction changes the length, and the stored text
(hence the content hash) is the redacted, capped text, so that dedup compares what is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from capy.digests import sha256
from capy.rules.views.retention import OversizePolicy, Size
from capy.rules.views.secrets import SecretsPack
from capy.store.errors import StoreError

# Only the head is inspected for binary content, as `file` and git do: cheap and bounded.
BINARY_SAMPLE_BYTES = 8192
# Above this share of undecodable bytes or control characters in the sample, the input is not
# text a person or an agent could search (images, archives, compiled objects).
BINARY_MAX_NONTEXT_RATIO = 0.3
# What binary looks like once decoded: C0/C1 control characters other than the ones ordinary
# text contains (backspace, tab, newlines, form feed, ESC for ANSI colours in logs), U+FFFD
# from undecodable bytes, and lone surrogates. A regex: per-character checks cost 10 ms a call.
_NONTEXT = re.compile(r"[\x00-\x07\x0e-\x1a\x1c-\x1f\x7f-\x9f\ufffd\ud800-\udfff]")
# Marks the place where the size cap cut content out, so a reader knows something is missing.
OMISSION_MARKER = "\n\n[… capy: {omitted:,} bytes omitted to fit the {cap:,}-byte source cap …]\n\n"


class ContentError(StoreError):
    """Content the indexer refuses (binary, empty, over the size cap); the message names it."""


@dataclass(frozen=True)
class PreparedContent:
    """Text ready to store: redacted, capped, hashed."""

    text: str
    content_hash: str
    size: int  # UTF-8 bytes of `text`
    redactions: dict[str, int]
    omitted_bytes: int = 0  # bytes dropped by a truncating size policy


def prepare_content(
    content: str | bytes, *, label: str, secrets: SecretsPack, size: Size
) -> PreparedContent:
    """Decode, check, redact and cap `content`; raises `ContentError` naming `label`."""
    text = decode_content(content, label=label)
    if not text.strip():
        raise ContentError(
            f"nothing to index for {label!r}: the content is empty or only whitespace"
        )
    redacted, redactions = redact_text(text, secrets)
    capped, omitted = apply_size_cap(redacted, size, label=label)
    data = capped.encode("utf-8")
    return PreparedContent(
        text=capped,
        content_hash=sha256(data).hexdigest(),
        size=len(data),
        redactions=redactions,
        omitted_bytes=omitted,
    )


def decode_content(content: str | bytes, *, label: str) -> str:
    """UTF-8 with replacement for bytes; binary input (either type) is refused."""
    if isinstance(content, bytes | bytearray | memoryview):
        raw = bytes(content)
        if b"\x00" in raw[:BINARY_SAMPLE_BYTES]:
            raise _binary_error(label)
        text = raw.decode("utf-8", errors="replace")
    elif isinstance(content, str):
        text = content
        if "\x00" in text[:BINARY_SAMPLE_BYTES]:
            raise _binary_error(label)
    else:
        raise ContentError(
            f"cannot index {label!r}: content must be text or bytes, not {type(content).__name__}"
        )
    if _nontext_ratio(text[:BINARY_SAMPLE_BYTES]) > BINARY_MAX_NONTEXT_RATIO:
        raise _binary_error(label)
    # Lone surrogates (from a str built with surrogateescape) cannot be stored as UTF-8.
    return text.encode("utf-8", errors="replace").decode("utf-8")


def _nontext_ratio(sample: str) -> float:
    if not sample:
        return 0.0
    return len(_NONTEXT.findall(sample)) / len(sample)


def _binary_error(label: str) -> ContentError:
    return ContentError(
        f"refusing to index {label!r}: it looks like binary data, not text; index a text "
        "rendering of it instead (for example a hex dump or the output of a converter)"
    )


def redact_text(text: str, secrets: SecretsPack) -> tuple[str, dict[str, int]]:
    """Mask every secret through capy's one redaction engine (`[REDACTED:<rule id>]`; the word
    "redacted" is on the secrets pack's placeholder allowlist, so re-redacting stored text after
    a secrets-pack change leaves earlier masks alone); return the text and counts per rule."""
    from capy.security.redaction import redact

    result = redact(text, secrets=secrets)
    return result.text, result.counts


def apply_size_cap(text: str, size: Size, *, label: str) -> tuple[str, int]:
    """Enforce the retention pack's per-source cap according to its `on_oversize` policy.

    Returns the text to keep and how many bytes were dropped. `reject` raises `ContentError`.
    """
    cap = size.max_source_bytes
    data = text.encode("utf-8")
    if len(data) <= cap:
        return text, 0
    if size.on_oversize is OversizePolicy.REJECT:
        raise ContentError(
            f"refusing to index {label!r}: {len(data):,} bytes is over the {cap:,}-byte cap per "
            "source (retention pack size.max_source_bytes); index a smaller part of it"
        )
    # Room for the marker, sized for the largest number it could show, so the total stays
    # within the cap whatever is actually omitted.
    reserve = len(OMISSION_MARKER.format(omitted=len(data), cap=cap).encode("utf-8"))
    keep = max(cap - reserve, 0)
    if size.on_oversize is OversizePolicy.TRUNCATE_TAIL:
        head, tail = data[:keep], b""
    else:  # truncate-middle: the command line and the summary or the errors sit at the ends
        head, tail = data[: keep - keep // 2], data[len(data) - keep // 2 :]
    # Cutting bytes can split a character; `ignore` drops the partial one at each cut.
    head_text = head.decode("utf-8", errors="ignore")
    tail_text = tail.decode("utf-8", errors="ignore")
    omitted = len(data) - len(head_text.encode("utf-8")) - len(tail_text.encode("utf-8"))
    return head_text + OMISSION_MARKER.format(omitted=omitted, cap=cap) + tail_text, omitted
