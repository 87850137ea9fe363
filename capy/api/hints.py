"""What to do next, worded for whoever reads the reply.

The same library call answers an agent over MCP and a person at the CLI. The facts in a reply
are the same for both; the suggestions differ: an agent is told the tool call and parameter
(`capy_search(queries=[...])`, `force=true`), a person the command and option
(`capy search '...'`, `--force`). Every suggestion a reply makes is written here, once, with
both spellings side by side, so neither audience is sent a call it cannot make.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum


class Audience(StrEnum):
    AGENT = "agent"  # an MCP client: tool calls with their parameters
    PERSON = "person"  # someone at the `capy` command line: commands with their options


@dataclass(frozen=True)
class Hints:
    """The usage hints a reply suggests, worded for its audience."""

    audience: Audience = Audience.AGENT

    @property
    def for_agent(self) -> bool:
        return self.audience is Audience.AGENT

    def search(
        self,
        queries: Sequence[str] | None = None,
        *,
        source: str | None = None,
        kinds: Sequence[str] = (),
    ) -> str:
        """The call (or command) that searches `source` for `queries` (None: a placeholder),
        including `kinds` not searched by default. Unquoted: callers put it in backticks."""
        if self.for_agent:
            shown = json.dumps(list(queries), ensure_ascii=False) if queries else '["..."]'
            call = f"capy_search(queries={shown}"
            if source is not None:
                call += f", source={json.dumps(source, ensure_ascii=False)}"
            if kinds:
                call += f", include_kinds={json.dumps(list(kinds))}"
            return call + ")"
        words = ["capy", "search", *(queries or ["..."])]
        if source is not None:
            words += ["--source", source]
        for kind in kinds:
            words += ["--kind", kind]
        return " ".join(shlex.quote(word) for word in words)

    def include_kinds(self, kinds: Sequence[str]) -> str:
        """How to add left-out kinds to a search."""
        return self._either(
            f"add include_kinds={json.dumps(list(kinds))}",
            "pass " + " ".join(f"--kind {kind}" for kind in kinds),
        )

    def include_kinds_argument(self) -> str:
        """The name of the argument that widens a search to more kinds."""
        return self._either("include_kinds", "--kind")

    def refetch(self) -> str:
        return self._either("force=true", "--force")

    def split_again(self) -> str:
        return self._either(
            "call capy_index again with split=true", "run `capy index` again with --split"
        )

    def index_file(self) -> str:
        return self._either("index it with capy_index", "index it with `capy index FILE`")

    def apply_cleanup(self) -> str:
        return self._either(
            "call again with dry_run=false to remove them", "run again with --apply to remove them"
        )

    def find_indexed(self, label: str, kind: str) -> str:
        """Where output indexed under `label` is searched from. An agent's session searches its
        own sources by default; a later `capy` command is another process, so it is given the
        whole command, with the kind it would otherwise leave out."""
        if self.for_agent:
            return f"indexed as `{label}` to search"
        return f"indexed: search it with `{self.search(source=label, kinds=[kind])}`"

    def rerun_without_intent(self) -> str:
        return self._either("without an intent", "without --intent")

    def _either(self, for_agent: str, for_person: str) -> str:
        return for_agent if self.for_agent else for_person


AGENT_HINTS = Hints(Audience.AGENT)
PERSON_HINTS = Hints(Audience.PERSON)
