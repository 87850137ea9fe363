"""The knowledge-base sweep: past sessions, as turn-pair transcripts, into the knowledge base.

Each session goes into the knowledge base of the project it ran in (its working directory,
resolved like any capy project: a linked worktree shares its main worktree's base). That is
where that project's agent searches; putting every project's history into the current one would
answer one project's questions with another's sessions. `db_path` overrides this and sends every
session to one file (an archive from another machine, whose directories do not exist here).

A dry run takes the same path and decides the same outcomes; only the writes are left out, and
the chunk count it reports comes from the same chunker the index uses.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from capy.sessions.discovery import SessionFile, discover_sessions, parse_session, peek_cwd
from capy.sessions.redaction import redact_session
from capy.sessions.report import SessionsReport
from capy.sessions.state import SweepState, fingerprint, load_state
from capy.sessions.transcript import build_transcript

if TYPE_CHECKING:
    from capy.rules import RuleSet
    from capy.store import Store, StoreLocation

SESSION_KIND = "session"
CONTENT_TYPE = "markdown"  # one `##` section per turn-pair chunk
Progress = Callable[[int, int], None]

# Outcomes, in the order a report lists them.
INDEXED = "indexed"
UNCHANGED = "unchanged"  # same modification time and size as at the last sweep
TOO_SMALL = "too-small"  # fewer real prompts or characters than the pack's sweep thresholds
LIVE = "live"  # modified within the pack's settle time: the session's own hooks handle it
NO_PROJECT = "no-project"  # its working directory is not on this machine
FAILED = "failed"
OUTCOMES = (INDEXED, UNCHANGED, TOO_SMALL, LIVE, NO_PROJECT, FAILED)


@dataclass
class SessionOutcome:
    path: str
    platform: str
    outcome: str
    reason: str = ""
    label: str | None = None
    database: str | None = None
    messages: int = 0
    tool_calls: int = 0
    sidecars: int = 0
    user_turns: int = 0
    content_chars: int = 0
    chunks: int = 0
    bytes: int = 0
    malformed_lines: int = 0
    redactions: dict[str, int] = field(default_factory=dict)


@dataclass
class SweepReport(SessionsReport):
    OUTCOMES = OUTCOMES
    sessions: list[SessionOutcome] = field(default_factory=list)

    @property
    def totals(self) -> dict[str, int]:
        indexed = [item for item in self.sessions if item.outcome == INDEXED]
        return {
            "sessions": len(self.sessions),
            "messages": sum(item.messages for item in indexed),
            "tool_calls": sum(item.tool_calls for item in indexed),
            "chunks": sum(item.chunks for item in indexed),
            "bytes": sum(item.bytes for item in indexed),
            "malformed_lines": sum(item.malformed_lines for item in self.sessions),
            "redactions": sum(sum(item.redactions.values()) for item in self.sessions),
            "databases": len({item.database for item in indexed}),
        }


@dataclass
class SweepOptions:
    dry_run: bool = False
    force: bool = False  # sweep files again even when unchanged since the last sweep
    source: Path | None = None  # a folder of transcripts instead of the agents' own folders
    db_path: Path | None = None  # one database for every session, instead of each project's
    now: float | None = None


def sweep(options: SweepOptions, *, progress: Progress | None = None) -> SweepReport:
    """Discover, parse, and index (unless a dry run) every session worth it."""
    from capy.rules import load_rules

    rules = load_rules()
    files = discover_sessions(rules.view("platforms"), rules.view("transcripts"), options.source)
    run = _Run(options, rules)
    report = SweepReport(dry_run=options.dry_run)
    try:
        for done, item in enumerate(files, 1):
            report.sessions.append(run.one(item))
            if progress:
                progress(done, len(files))
        if not options.dry_run:
            run.save_states()
    finally:
        run.close()
    return report


class _Run:
    """Per-run caches: one store, one state file and one rule set per target database."""

    def __init__(self, options: SweepOptions, rules: RuleSet) -> None:
        self.options = options
        self.rules = rules
        self.now = options.now if options.now is not None else time.time()
        self.locations: dict[str, StoreLocation] = {}
        self.states: dict[Path, SweepState] = {}
        self.stores: dict[Path, Store] = {}
        self.rulesets: dict[Path, RuleSet] = {}

    def one(self, item: SessionFile) -> SessionOutcome:
        outcome = SessionOutcome(path=str(item.path), platform=item.platform, outcome=FAILED)
        try:
            self._decide(item, outcome)
        except OSError as error:
            outcome.outcome, outcome.reason = FAILED, f"cannot read it: {error.strerror or error}"
        except Exception as error:  # a StoreError or ContentError carries a sentence
            message = getattr(error, "message", None) or str(error)
            outcome.outcome, outcome.reason = FAILED, message
        return outcome

    def _decide(self, item: SessionFile, outcome: SessionOutcome) -> None:
        sweep_rules = self.rules.view("transcripts").sweep
        mtime = item.path.stat().st_mtime
        if self.now - mtime < sweep_rules.settle_seconds:
            outcome.outcome = LIVE
            outcome.reason = f"modified in the last {sweep_rules.settle_seconds} seconds"
            return
        location = self._location(item)
        if location is None:
            outcome.outcome = NO_PROJECT
            outcome.reason = "its working directory is not on this machine (use --db to pick one)"
            return
        outcome.database = str(location.path)
        state = self._state(location)
        print_ = fingerprint(item.related_files())
        if not self.options.force and state.is_unchanged(item.path, print_):
            outcome.outcome, outcome.reason = UNCHANGED, "unchanged since the last sweep"
            outcome.label = state.entries[str(item.path)].get("label") or None
            return
        rules = self._rules_for(location.project_root)
        self._index(item, outcome, location, rules)
        state.record(item.path, print_, outcome.outcome, outcome.label)

    def _index(
        self, item: SessionFile, outcome: SessionOutcome, location: StoreLocation, rules: RuleSet
    ) -> None:
        transcripts = rules.view("transcripts")
        session = parse_session(item, transcripts, transcripts.sweep.max_file_bytes)
        outcome.redactions = redact_session(session, rules.view("secrets"), indexed_only=True)
        transcript = build_transcript(session, transcripts)
        parts = session.all_sessions()
        outcome.label = f"session:{session.platform}:{session.session_id}"
        outcome.messages = sum(len(part.messages) for part in parts)
        outcome.tool_calls = sum(len(part.tool_calls) for part in parts)
        outcome.sidecars = len(session.sidecars)
        outcome.malformed_lines = sum(part.report.malformed_count for part in parts)
        outcome.user_turns, outcome.content_chars = transcript.user_turns, transcript.content_chars
        if not transcripts.sweep.worth_indexing(transcript.user_turns, transcript.content_chars):
            outcome.outcome = TOO_SMALL
            outcome.reason = (
                f"{transcript.user_turns} prompts and {transcript.content_chars} characters; "
                f"the sweep needs {transcripts.sweep.min_user_turns} and "
                f"{transcripts.sweep.min_content_chars}"
            )
            return
        outcome.outcome = INDEXED
        if self.options.dry_run:
            outcome.chunks, outcome.bytes = _measure(transcript.text, outcome.label, rules)
            return
        from capy.store.indexing import index_content

        result = index_content(
            self._store(location),
            transcript.text,
            label=outcome.label,
            kind=SESSION_KIND,
            content_type=CONTENT_TYPE,
            rules=rules,
        )
        outcome.chunks, outcome.bytes = result.chunk_count, result.bytes

    def _location(self, item: SessionFile) -> StoreLocation | None:
        from capy.store import locate_store

        if self.options.db_path is not None:
            key = f"db:{self.options.db_path}"
            if key not in self.locations:
                self.locations[key] = locate_store(db_path=self.options.db_path)
            return self.locations[key]
        cwd = peek_cwd(item.path)
        if not cwd or not Path(cwd).is_dir():
            return None
        if cwd not in self.locations:
            self.locations[cwd] = locate_store(project_dir=Path(cwd))
        return self.locations[cwd]

    def _state(self, location: StoreLocation) -> SweepState:
        if location.path not in self.states:
            self.states[location.path] = load_state(location.path)
        return self.states[location.path]

    def _rules_for(self, project_root: Path) -> RuleSet:
        from capy.rules import load_rules

        if project_root not in self.rulesets:
            self.rulesets[project_root] = load_rules(project_root)
        return self.rulesets[project_root]

    def _store(self, location: StoreLocation) -> Store:
        from capy.store import open_store

        if location.path not in self.stores:
            self.stores[location.path] = open_store(location.project_root, db_path=location.path)
        return self.stores[location.path]

    def save_states(self) -> None:
        for path, state in self.states.items():
            if path.is_file():  # a database that was never opened gets no state file
                state.save()

    def close(self) -> None:
        for store in self.stores.values():
            store.close()


def _measure(text: str, label: str, rules: RuleSet) -> tuple[int, int]:
    """Chunks and stored bytes the indexer would produce, by the indexer's own steps."""
    from capy.store.chunkstore import chunk_for_index
    from capy.store.content import prepare_content

    prepared = prepare_content(
        text, label=label, secrets=rules.view("secrets"), size=rules.view("retention").size
    )
    chunks = chunk_for_index(prepared.text, CONTENT_TYPE, label, rules.view("chunking"))
    return len(chunks), prepared.size
