"""`capy recall QUERY...`: what the capsule log holds about each query, as a brief in budget."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from cyclopts import Parameter

from capy.cli.capsules import PathOption, drain_before_reading
from capy.cli.guard import guarded
from capy.cli.store import JsonFlag

if TYPE_CHECKING:
    from capy.capsules import CapsuleStore


def recall(
    *query: str,
    budget: Annotated[int | None, Parameter(name="--budget")] = None,
    project: Annotated[str | None, Parameter(name="--project")] = None,
    all_projects: Annotated[bool, Parameter(name="--all", negative=())] = False,
    kind: Annotated[tuple[str, ...], Parameter(name="--kind", negative=())] = (),
    since: Annotated[str | None, Parameter(name="--since")] = None,
    as_json: JsonFlag = False,
    path: PathOption = None,
) -> int:
    """Recall what happened: each query's most relevant capsules as a markdown brief within a
    token budget (a query that is a capsule id shows that capsule).

    Parameters
    ----------
    query
        One or more queries; quote a query of several words.
    budget
        Tokens a brief may use (default: the capsules pack's, 1500).
    project
        Recall from this project's scope instead of the current one.
    all_projects
        Recall from every scope.
    kind
        Only capsules of this kind (repeat for more).
    since
        Only capsules written at or after this ISO 8601 time.
    as_json
        Print per query the items (capsule id, kind, session, score, text) and the brief.
    path
        Capsule log to use instead of the default (also CAPY_CAPSULES_PATH).
    """

    def run() -> int:
        from capy.capsules import open_capsules
        from capy.capsules.model import canonical_time
        from capy.capsules.recall import recall as recall_query
        from capy.cli.output import error_line, print_json, say

        queries = [text for text in query if text.strip()]
        if not queries:
            error_line('give a query: capy recall "why did the import fail"')
            return 2
        if since is not None:
            canonical_time(since, name="--since")  # a bad one is named as the person gave it
        with open_capsules(path) as capsules:
            drain_before_reading(capsules, path)
            _catch_up(capsules)
            results = [
                recall_query(
                    capsules,
                    text,
                    budget_tokens=budget,
                    scope="all" if all_projects else "project",
                    project=project,
                    kinds=list(kind) or None,
                    since=since,
                )
                for text in queries
            ]
        if as_json:
            print_json({"queries": [result.as_json() for result in results]})
        else:
            say("\n".join(result.brief for result in results).rstrip("\n"))
        return 0

    return guarded(run)


def _catch_up(capsules: CapsuleStore) -> None:
    """One bounded round of the pipeline, so capsules captured a moment ago can be found (the
    rest waits for `capy serve` or `capy capsules distill`)."""
    import time

    from capy.capsules.pipeline import drain

    drain(
        capsules, deadline=time.monotonic() + capsules.rules.view("capsules").worker.round_seconds
    )
