"""`capy search` without the cyclopts app: the body the command runs, and what it shares with
`capy index`, `cleanup` and the rest of capy.cli.knowledge.

cyclopts and rich cost several bare Python starts; `capy.cli.quick` runs a plain `capy search
QUERY...` here directly, and the cyclopts command calls the same function.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from capy.cli.guard import guarded
from capy.cli.output import say

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from capy.rules import RuleSet
    from capy.store import Store


def run_search(
    queries: Sequence[str],
    *,
    limit: int | None = None,
    kinds: list[str] | None = None,
    source: str | None = None,
    db: Path | None = None,
    as_json: bool = False,
) -> int:
    """Search each query on its own and print the hits; the exit code of `capy search`."""

    def run() -> int:
        from capy.store.content import ContentError
        from capy.store.corpus import search_store

        if not queries:
            raise ContentError("give at least one QUERY to search for")
        if limit is not None and limit < 1:
            raise ContentError(f"--limit must be at least 1, not {limit}")
        chosen = _check_kinds(kinds)
        with open_knowledge(db) as (store, rules):
            results = search_store(
                store, list(queries), limit=limit, kinds=chosen, source=source, rules=rules
            )
        if as_json:
            from capy.cli.output import print_json

            print_json({"queries": [_result_json(result) for result in results]})
        else:
            for number, result in enumerate(results):
                _print_result(result, first=number == 0)
        return 0

    return guarded(run)


@contextmanager
def open_knowledge(db: Path | None) -> Iterator[tuple[Store, RuleSet]]:
    """Open the store and the rules in force, re-chunking a small stale backlog first."""
    from capy.cli.output import error_line
    from capy.cli.warm import current, open_warm_store
    from capy.store.reindexing import ensure_fresh  # not .indexing: no chunking view

    context = current() if db is None else None
    if context is not None:  # a warm start: settings and rules from the cache
        with open_warm_store(context) as store:
            ensure_fresh(store, context.ruleset, notify=error_line)
            yield store, context.ruleset
        return
    from capy.rules import load_rules
    from capy.store import open_store

    with open_store(db_path=db) as store:
        rules = load_rules(store.location.project_root)
        ensure_fresh(store, rules, notify=error_line)
        yield store, rules


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _check_kinds(kinds: list[str] | None) -> list[str] | None:
    from capy.rules.views.retention import SourceKind
    from capy.store.content import ContentError

    known = [item.value for item in SourceKind]
    for kind in kinds or []:
        if kind not in known:
            raise ContentError(f"unknown source kind {kind!r}; use one of {', '.join(known)}")
    return kinds or None


def _result_json(result: Any) -> dict[str, Any]:
    fields = ("source_label", "kind", "title", "content", "snippet", "layer", "score")
    return {
        "query": result.query,
        "corrected_query": result.corrected_query,
        "note": _note_with_hint(result),
        "hits": [{name: getattr(hit, name) for name in fields} for hit in result.hits],
    }


def _print_result(result: Any, *, first: bool) -> None:
    if not first:
        say()
    count = len(result.hits)
    header = f"{result.query!r}: {plural(count, 'hit')}"
    if result.corrected_query:
        header += f" (searched as {result.corrected_query!r})"
    say(header)
    for rank, hit in enumerate(result.hits, start=1):
        say(f"{rank:>3}. {hit.source_label} › {hit.title}  [{hit.layer} {hit.score:.4f}]")
        for line in hit.snippet.splitlines() or [""]:
            say(f"     {line}")
    if result.note:
        say(f"note: {_note_with_hint(result)}")


def _note_with_hint(result: Any) -> str | None:
    """The core's note on left-out kinds, with the option that includes them here."""
    from capy.api.hints import PERSON_HINTS
    from capy.api.knowledge import note_with_hint

    return note_with_hint(result, PERSON_HINTS)
