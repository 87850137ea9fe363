"""Shared terminal output for CLI commands: one console, one-line errors, JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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


@contextmanager
def progress_bar(label: str, *, quiet: bool = False) -> Iterator[Callable[[int, int], None] | None]:
    """A transient bar on stderr fed by (done, total) callbacks, for a person at a terminal.

    Yields None when quiet or off a terminal (a pipe, CI, a test): a bar there is noise in
    someone's log, and callers skip the reporting work.
    """
    if quiet or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)
