"""Located, human-readable findings about rule packs, rendered as text or JSON."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One finding, pointing at a file position: `file:line:col: error[code] message`."""

    file: str
    line: int
    column: int
    code: str
    message: str
    severity: str = "error"
    hint: str | None = None
    rule_id: str | None = None
    pointer: str = ""
    # Source line shown under the message; not part of identity or ordering.
    frame: str | None = field(default=None, compare=False)

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def location(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    def render(self) -> str:
        lead = (
            f"{self.rule_id}: "
            if self.rule_id and not self.message.startswith(self.rule_id)
            else ""
        )
        lines = [f"{self.location()}: {self.severity}[{self.code}] {lead}{self.message}"]
        if self.frame is not None:
            gutter = f"{self.line} | "
            lines.append(f"{gutter}{self.frame}")
            lines.append(" " * (len(gutter) + max(self.column - 1, 0)) + "^")
        if self.hint:
            lines.append(f"  hint: {self.hint}")
        return "\n".join(lines)

    def as_json(self) -> dict:
        data = asdict(self)
        data.pop("frame")
        return data


def json_pointer(path: Sequence) -> str:
    return "/" + "/".join(str(part) for part in path) if path else ""


class Locatable:
    """Anything that can say which file and position a path inside a pack came from."""

    def locate(self, path: tuple, key: bool = False) -> tuple[str, Any]:
        raise NotImplementedError

    def at(
        self,
        path: tuple,
        code: str,
        message: str,
        hint: str | None = None,
        *,
        key: bool = False,
        severity: str = "error",
        rule_id: str | None = None,
    ) -> Diagnostic:
        """A diagnostic pointing at `path` (at its key when `key`)."""
        file, position = self.locate(path, key)
        return Diagnostic(
            file,
            position.line,
            position.column,
            code,
            message,
            severity=severity,
            hint=hint,
            rule_id=rule_id,
            pointer=json_pointer(path),
        )


def with_frame(diagnostic: Diagnostic, text: str | None) -> Diagnostic:
    """Attach the offending source line so the reader sees the spot without opening the file."""
    if text is None or diagnostic.line < 1:
        return diagnostic
    lines = text.splitlines()
    if diagnostic.line > len(lines):
        return diagnostic
    frame = lines[diagnostic.line - 1].rstrip()
    return Diagnostic(**{**asdict(diagnostic), "frame": frame})


def summarise(diagnostics: Sequence[Diagnostic], verbose: bool) -> tuple[list[Diagnostic], int]:
    """Best match first for each file; the rest are counted unless verbose.

    Schema failures tend to cascade (one wrong indent yields a dozen errors), so by default each
    file shows its most relevant schema error and every non-schema finding.
    """
    if verbose:
        return list(diagnostics), 0
    shown: list[Diagnostic] = []
    hidden = 0
    seen_schema_files: set[str] = set()
    for item in diagnostics:
        if item.code in SCHEMA_CODES:
            if item.file in seen_schema_files:
                hidden += 1
                continue
            seen_schema_files.add(item.file)
        shown.append(item)
    return shown, hidden


SCHEMA_CODES = frozenset({"schema", "unknown-key", "missing-key", "wrong-type", "bad-value"})


def render_text(diagnostics: Iterable[Diagnostic], verbose: bool = False) -> str:
    items = list(diagnostics)
    shown, hidden = summarise(items, verbose)
    parts = [item.render() for item in shown]
    errors = sum(1 for item in items if item.is_error)
    warnings = len(items) - errors
    if hidden:
        noun = "error" if hidden == 1 else "errors"
        parts.append(f"{hidden} other {noun} (use --verbose)")
    parts.append(f"{_count(errors, 'error')}, {_count(warnings, 'warning')}")
    return "\n".join(parts)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def render_json(diagnostics: Iterable[Diagnostic]) -> str:
    items = list(diagnostics)
    payload = {
        "ok": not any(item.is_error for item in items),
        "errors": sum(1 for item in items if item.is_error),
        "warnings": sum(1 for item in items if not item.is_error),
        "diagnostics": [item.as_json() for item in items],
    }
    return json.dumps(payload, indent=2, sort_keys=True)
