"""The parameter types and annotation sets the capy_* tools share.

Tool signatures are read by the SDK at registration, so these live at module level where the
tool modules import them by name.
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

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
    Field(description="Seconds before the run is stopped (default and ceiling from capy's rules)."),
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
    Field(description="Questions or keywords; each is searched on its own. Batch them here."),
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
