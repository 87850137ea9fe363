"""The proxy's recorder: a thread that turns relayed exchanges into capsules, so recording
never holds up a reply and a recording failure never breaks one. It runs in the recorder
process (capy.proxy.record_process), away from the server's interpreter lock.

The server only sends an `Exchange` (after its reply went out). The thread plans its records
(capy.proxy.recording), skips every message whose fingerprint is in the log or spooled already,
appends the rest to the project's capture spool (the one hooks write, 0600, redacted before it
is written), and then drains the spool into the capsule log like any other drainer
(capy.capsules.spool). A busy or unreadable log leaves the records in the spool for the next
drain; each failure is one line on stderr, never a traceback, never a message's text.
"""

from __future__ import annotations

import queue
import threading
from typing import TYPE_CHECKING

from capy.proxy.capsule_log import ThreadCapsuleLog

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from capy.proxy.recording import Exchange
    from capy.rules.ruleset import RuleSet

_STOP = None


class Recorder:
    def __init__(self, project_dir: Path, rules: RuleSet, log: Callable[[str], None]):
        from capy.capsules.location import locate_capsules
        from capy.capsules.spool import project_spool_path

        self._project_dir = project_dir
        self._rules = rules
        self._log = log
        self._queue: queue.SimpleQueue[Exchange | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="capy-proxy-recorder", daemon=True)
        self._capsule_log = ThreadCapsuleLog(project_dir, rules)
        # Fingerprints spooled but maybe not in the log yet (forgotten once the spool drains).
        self._pending: set[str] = set()
        self._redact: Callable[[str], str] | None = None
        self.spool = project_spool_path(project_dir, rules)
        self.project = str(locate_capsules(None, project_dir).project_root)
        self.spooled = 0
        self._problems: list[str] = []

    def warm(self) -> None:
        """Open the log and build the redactor now, before the first request, so that work
        does not share the first replies' time (a failure here is left for the first record,
        logs it again)."""
        self._problems = []
        self._guarded(
            "the capsule log could not be opened", lambda: self._capsule_log.store().stage_versions
        )
        self._redactor()
        if self._problems:
            self._log(self._problems[0])

    def start(self) -> None:
        self._thread.start()

    def submit(self, exchange: Exchange) -> None:
        """Queue an exchange (never blocks, never raises)."""
        self._queue.put(exchange)

    def close(self, timeout: float) -> None:
        """Record what is queued (waiting at most `timeout` seconds), then stop."""
        self._queue.put(_STOP)
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            while True:  # whatever queued meanwhile is recorded in one go
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            self._problems = []
            for exchange in batch:
                if exchange is not _STOP:
                    self._guarded("an exchange was not recorded", lambda e=exchange: self._spool(e))
            self._guarded("recorded messages wait in the spool", self._drain)
            if self._problems:  # one line per round, however many steps failed
                self._log(self._problems[0])
            if _STOP in batch:
                self._capsule_log.close()
                return

    def _guarded(self, what: str, action: Callable[[], object]) -> None:
        try:
            action()
        except Exception as problem:  # a recording failure must never reach the server
            self._problem(what, problem)

    def _problem(self, what: str, problem: Exception) -> None:
        detail = getattr(problem, "message", None) or type(problem).__name__
        self._problems.append(f"{what} ({detail})")

    def _spool(self, exchange: Exchange) -> None:
        from capy.proxy.recording import plan_records
        from capy.spooling import append_record

        planned = plan_records(
            exchange,
            self._rules.view("capsules"),
            self.project,
            self._redactor(),
            lambda fingerprints: self._pending | self._recorded(fingerprints),
        )
        for each in planned:
            append_record(str(self.spool), each.record)
            self._pending.add(each.fingerprint)
            self.spooled += 1

    def _recorded(self, fingerprints: set[str]) -> set[str]:
        """Those of `fingerprints` in the log; none when the log cannot be read now (the
        records are spooled all the same: a message kept twice beats one lost)."""
        from capy.store.errors import StoreError

        try:
            return self._capsule_log.store().backend.recorded_fingerprints(fingerprints)
        except StoreError as problem:
            self._problem("the capsule log could not be read", problem)
            return set()

    def _drain(self) -> None:
        from capy.capsules.spool import drain_spool, spool_pending

        if not spool_pending(self.spool):
            return
        drain_spool(self._capsule_log.store(), self.spool)
        if not spool_pending(self.spool):
            self._pending.clear()

    def _redactor(self) -> Callable[[str], str]:
        if self._redact is None:
            from capy.masking import PlainSecrets, plain_detectors

            self._redact = PlainSecrets(plain_detectors(self._rules.view("secrets"))).redact
        return self._redact
