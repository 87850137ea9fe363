"""The parameter types and annotation sets the capy_* tools share.

Tool signatures are read by the SDK at registration, so these live at module level where the
tool modules import them by name.
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

# The bounds the schemas state, each written once for both the JSON Schema constraint and the
# description that names it. They are the shipped packs' values (a test compares them): the
# schema is built when the server starts, before any pack is loaded, so that tools/list costs
# no rule loading. The code still applies the packs in force on top (an overlay may lower
# them), and never accepts more than the schema does.
MAX_QUERIES = 10  # search.limits.max_queries_per_call
DEFAULT_RESULTS = 3  # search.limits.default_results
MAX_RESULTS = 20  # search.limits.max_results
DEFAULT_TIMEOUT_S = 30  # executor.limits.timeout.default_seconds
MAX_TIMEOUT_S = 600  # executor.limits.timeout.max_seconds
DEFAULT_BATCH_CONCURRENCY = 4  # executor.limits.batch.default_concurrency
MAX_BATCH_CONCURRENCY = 8  # executor.limits.batch.max_concurrency
DEFAULT_FETCH_CONCURRENCY = 4  # security.fetch.concurrency.default
MAX_FETCH_CONCURRENCY = 8  # security.fetch.concurrency.max

Language = Annotated[
    str,
    Field(
        description=(
            "The language of the code, e.g. shell, python, javascript, typescript, ruby, go "
            "(aliases such as sh, py, js work). An unknown one gets the list capy runs."
        )
    ),
]
Timeout = Annotated[
    float | None,
    Field(
        description=(
            f"Seconds before the run is stopped (default {DEFAULT_TIMEOUT_S}, at most "
            f"{MAX_TIMEOUT_S})."
        ),
        gt=0,
        le=MAX_TIMEOUT_S,
    ),
]
Intent = Annotated[
    str | None,
    Field(
        description=(
            "What you are looking for in the output, in words (e.g. 'failing tests and their "
            "errors'). With an intent, long output (over a few KB) is indexed and only the "
            "matching sections come back. Give one whenever output may be long."
        )
    ),
]
Network = Annotated[
    Literal["on", "off"] | None,
    Field(
        description=(
            "'off' runs the code with no network at all, loopback included (a fresh network "
            "namespace; refused where the platform has none); 'on' shares the machine's "
            "network. Default from capy's executor rules (shipped: on). The reply's status "
            "line says which mode ran."
        )
    ),
]
Queries = Annotated[
    list[str],
    Field(
        description=(
            f"Questions or keywords, at most {MAX_QUERIES}; each is searched on its own. Batch "
            "them here."
        ),
        max_length=MAX_QUERIES,
    ),
]


def results_per_query(what: str) -> type:
    """The `limit` parameter of the search tools, bounded as the search pack bounds it."""
    return Annotated[  # type: ignore[return-value]
        int | None,
        Field(
            description=f"{what} per query (default {DEFAULT_RESULTS}, at most {MAX_RESULTS}).",
            ge=1,
            le=MAX_RESULTS,
        ),
    ]


ResultsPerQuery = results_per_query("Results")
HitsPerQuery = results_per_query("Hits")
BatchTimeout = Annotated[
    float | None,
    Field(
        description=(
            f"Seconds for the whole batch, shared, at most {MAX_TIMEOUT_S} (default: no shared "
            f"limit, each command stopped after {DEFAULT_TIMEOUT_S})."
        ),
        gt=0,
        le=MAX_TIMEOUT_S,
    ),
]
BatchConcurrency = Annotated[
    int | None,
    Field(
        description=(
            f"Commands run at once, 1 to {MAX_BATCH_CONCURRENCY} (default "
            f"{DEFAULT_BATCH_CONCURRENCY})."
        ),
        ge=1,
        le=MAX_BATCH_CONCURRENCY,
    ),
]
FetchConcurrency = Annotated[
    int | None,
    Field(
        description=(
            f"Fetches at once, 1 to {MAX_FETCH_CONCURRENCY} (default {DEFAULT_FETCH_CONCURRENCY})."
        ),
        ge=1,
        le=MAX_FETCH_CONCURRENCY,
    ),
]

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
# Runs arbitrary code: may change files and reach the network, so it is neither read-only nor
# known to be safe to repeat.
RUNS_CODE = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True
)
WRITES_STORE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


class BatchCommandInput(BaseModel):
    label: str = Field(description="A short name for this command's output, e.g. 'git-log'.")
    command: str = Field(description="A shell command.")


class FetchRequestInput(BaseModel):
    url: str = Field(description="An http or https URL.")
    source: str | None = Field(default=None, description="Label to index it under.")
