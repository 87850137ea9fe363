"""The one error type the executor raises for bad input: a sentence a person can act on."""

from __future__ import annotations


class ExecutorError(ValueError):
    """Unknown language, empty code, missing runtime, unreadable file, too many background jobs."""
