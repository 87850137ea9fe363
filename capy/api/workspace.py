"""The context every tool call runs in: the project, its rules, its knowledge base, its stats.

The MCP server keeps one Workspace for its life; a CLI twin makes one per command. Tool calls
run on worker threads: a CLI workspace opens the store per call, while the server's keeps a
small pool of open connections (`capy.store.pool`), one per call in flight, reused by the next
call and closed when the server exits.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from capy.api.hints import Audience, Hints

if TYPE_CHECKING:
    from capy.api.stats import SessionStats
    from capy.capsules import CapsuleStore
    from capy.capsules.pool import CapsulesPool
    from capy.rules import RuleSet
    from capy.server.trigram_upkeep import TrigramCatchUp
    from capy.store import Store
    from capy.store.pool import StorePool


class Workspace:
    def __init__(
        self,
        project_dir: Path | None = None,
        *,
        db_path: Path | None = None,
        session_id: str | None = None,
        audience: Audience = Audience.AGENT,
        keep_store_open: bool = False,
    ) -> None:
        # keep_store_open: a long-lived process (the server) keeps its store connections open
        # and saves its session stats off the calls' path.
        self._given_project = project_dir
        # Who reads the replies: an agent is told tool calls, a person commands.
        self.hints = Hints(audience)
        self.db_path = db_path
        self._session_id = session_id
        self._fresh_checked = False
        self._lock = threading.Lock()
        self._own_sources: set[int] = set()
        self._keep_store_open = keep_store_open
        self._pool: StorePool | None = None
        self._capsules_pool: CapsulesPool | None = None
        # Set by a process that writes deferred trigram blocks after its calls (the server:
        # capy.server.trigram_upkeep); None: an index call writes its own.
        self.trigram_catch_up: TrigramCatchUp | None = None

    @cached_property
    def project_dir(self) -> Path:
        from capy.config.paths import project_root

        return project_root(self._given_project or Path.cwd())

    @cached_property
    def rules(self) -> RuleSet:
        from capy.rules import load_rules

        return load_rules(self.project_dir)

    @cached_property
    def redacts_replies(self) -> bool:
        """Whether replies are redacted (the user's `redaction.replies`), read once per
        workspace like the rules: a server picks a change up when it restarts."""
        from capy.security.redaction import redaction_wanted

        return redaction_wanted(self.project_dir)

    @cached_property
    def stats(self) -> SessionStats:
        from capy.api.stats import SessionStats

        return SessionStats.start(
            self, session_id=self._session_id, background=self._keep_store_open
        )

    @contextmanager
    def store(self) -> Iterator[Store]:
        """An open knowledge base; the first one of a workspace re-chunks a small stale backlog."""
        with self._open_store() as store:
            with self._lock:
                first, self._fresh_checked = not self._fresh_checked, True
            if first:
                # Not capy.store.indexing: that one builds the chunking view, which a store
                # with nothing stale never needs.
                from capy.store.reindexing import ensure_fresh

                ensure_fresh(store, self.rules, notify=_quiet)
            yield store

    @property
    def _store_pool(self) -> StorePool:
        from capy.store.pool import StorePool

        project_dir = self.project_dir
        with self._lock:  # calls start on several threads at once; one pool for them all
            if self._pool is None:
                self._pool = StorePool(project_dir, self.db_path, notify=_quiet)
            return self._pool

    def close_store(self) -> None:
        """Close every connection the workspace keeps open (the server's exit)."""
        with self._lock:
            pools = [self._pool, self._capsules_pool]
        for pool in pools:
            if pool is not None:
                pool.close()

    def capsules(self) -> AbstractContextManager[CapsuleStore]:
        """The open capsule log: from a pool of kept connections when the workspace keeps its
        stores open (the server), else opened for this call alone."""
        if not self._keep_store_open:
            from capy.capsules import open_capsules

            return open_capsules(project_dir=self.project_dir, notify=_quiet)
        from capy.capsules.pool import CapsulesPool

        project_dir = self.project_dir
        with self._lock:
            if self._capsules_pool is None:
                self._capsules_pool = CapsulesPool(project_dir, notify=_quiet)
            return self._capsules_pool.checkout()

    def _open_store(self):
        """A connection from the pool when the workspace keeps the store open (the server),
        else a store opened for this call alone."""
        if self._keep_store_open:
            return self._store_pool.checkout()
        from capy.store import open_store

        return open_store(self.project_dir, db_path=self.db_path, notify=_quiet)

    def remember_session_source(self, source_id: int) -> None:
        """Mark a source this session indexed as ephemeral (a command's output), so that its
        own searches find it without asking for the kind. A workspace is one session: one MCP
        server process (stdio serves one client), or one CLI command."""
        with self._lock:
            self._own_sources.add(source_id)

    def session_sources(self) -> tuple[int, ...]:
        with self._lock:
            return tuple(sorted(self._own_sources))

    def store_directory(self) -> Path:
        """The folder holding the knowledge base, where per-session files sit beside it."""
        from capy.store import locate_store

        return locate_store(self.project_dir, self.db_path).path.parent


def _quiet(message: str) -> None:
    """Store notices (a damaged file moved aside) go to the server log, never the protocol."""
    import logging

    logging.getLogger("capy").warning("%s", message)
