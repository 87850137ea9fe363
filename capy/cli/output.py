"""Shared terminal output for CLI commands: one console, one-line errors, JSON."""

from __future__ import annotations

import json
import sys
from functools import cache
from typing import Any


@cache
def console():
    from rich.console import Console

    return Console(highlight=False)


def error_line(message: str) -> None:
    """Errors a person sees are one sentence, on stderr, prefixed so scripts can grep them."""
    print(f"capy: {message}", file=sys.stderr)


def print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=str))
