"""`json.loads` and `json.dumps` for a hook process, without importing the `json` package.

A hook is a fresh process on every tool call, and `import json` costs about as much as the
whole interpreter start, because `json` imports `re` (for two patterns) and `re` imports
`enum`, `functools` and `collections`. The parsing and writing themselves are done by `_json`,
the C accelerator that `json` uses too; this module drives it the same way `json.decoder` and
`json.encoder` do, so the text read and written is byte for byte what `json` would give (a
property test compares them). Where `_json` is missing or its interface differs (another
Python), both functions hand over to `json` itself.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# What JSON counts as whitespace between tokens (RFC 8259), the characters `json` skips.
_WHITESPACE = " \t\n\r"
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _ScannerContext:
    """The attributes `_json.make_scanner` reads from a `json.JSONDecoder`, at their defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__
    memo: dict[str, str] = {}  # noqa: RUF012 - the scanner's own memo, cleared after each use


def _not_serializable(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _accelerated() -> tuple[Any, Any, Any] | None:
    """(scan_once, encode ascii, encode unicode) from `_json`, or None to use `json`."""
    try:
        import _json

        scanner = _json.make_scanner(_ScannerContext())
        # Probe the encoder's signature here: a Python whose `_json` takes other arguments
        # falls back to `json` instead of failing on the first dump.
        _json.make_encoder(
            None, _not_serializable, _json.encode_basestring_ascii, None, ":", ",", 0, 0, 1
        )
        return scanner, _json.encode_basestring_ascii, _json.encode_basestring
    except (ImportError, AttributeError, TypeError):
        return None


_C = _accelerated()


def loads(text: str | bytes | bytearray) -> Any:
    """`json.loads(text)`; raises ValueError on anything `json` would refuse."""
    if _C is None or not _plain(text):
        import json

        return json.loads(text)
    if not isinstance(text, str):
        text = text.decode("utf-8", "surrogatepass")
    if text.startswith("\ufeff"):
        import json

        return json.loads(text)  # raises json's error for a byte order mark
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _C[0](text, start)
    except Exception:
        import json

        return json.loads(text)
    finally:
        _ScannerContext.memo.clear()
    if text[end:].strip(_WHITESPACE):
        import json

        return json.loads(text)  # raises json's "Extra data" error
    return value


def _plain(text: Any) -> bool:
    """Whether `text` is UTF-8 without a byte order mark (or a str): what a hook reads. Other
    byte encodings `json` detects itself."""
    if isinstance(text, str):
        return True
    if not isinstance(text, bytes | bytearray):
        return False
    head = bytes(text[:4])
    return not head.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")) and b"\x00" not in head


def dumps(value: Any, *, ensure_ascii: bool = True, sort_keys: bool = False) -> str:
    """`json.dumps(value, ensure_ascii=..., sort_keys=...)` with the default separators."""
    if _C is None:
        import json

        return json.dumps(value, ensure_ascii=ensure_ascii, sort_keys=sort_keys)
    import _json

    encoder = _C[1] if ensure_ascii else _C[2]
    if isinstance(value, str):
        return encoder(value)
    iterencode = _json.make_encoder(
        {}, _not_serializable, encoder, None, ": ", ", ", sort_keys, False, True
    )
    return "".join(iterencode(value, 0))
