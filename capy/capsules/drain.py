"""`python -m capy.capsules.drain [PROJECT_DIR] [--niceness N] [--sessions-only]`: save the
ended sessions' records to the knowledge base (capy.hooks.ended_sessions), drain the capture
spool into the capsule log, then let memory learn from it (capy.memory). With --niceness, it
first lowers its CPU priority (the capsules pack's `worker.background_niceness`, which hooks
pass on); with --sessions-only (SessionEnd with capture off) it only saves the sessions.

Hooks start it detached (SessionEnd, PreCompact, and a spool past the pack's size), so it must
never print to a terminal it shares, and never fail loudly: a drain that cannot run now leaves
the spool for the next one. The detached start is `capy.hooks.capture.start_drainer`, which
imports nothing of the capsule log (a hook pays for every import), through `capy.drain_start`
(priority first, then the hook's exit, then this).
"""

from __future__ import annotations

import sys

SESSIONS_ONLY = "--sessions-only"


def main(argv: list[str] | None = None) -> int:
    from pathlib import Path

    from capy.drain_start import lower_priority

    args = list(sys.argv[1:] if argv is None else argv)
    if "--niceness" in args[:-1]:
        at = args.index("--niceness")
        lower_priority(args[at + 1])
        del args[at : at + 2]
    sessions_only = SESSIONS_ONLY in args
    args = [arg for arg in args if arg != SESSIONS_ONLY]
    project = Path(args[0]) if args else Path.cwd()
    _save_session_records(project)
    if sessions_only:
        return 0
    from capy.capsules import open_capsules
    from capy.capsules.spool import drain_spool_report
    from capy.store.errors import StoreError

    try:
        with open_capsules(project_dir=project, notify=lambda _line: None) as store:
            report = drain_spool_report(store)
            _learn(store)
    except StoreError as error:
        print(f"capy: the capture spool was not drained: {error.message}", file=sys.stderr)
        return 1
    if report is not None and report.refused:
        print(f"capy: {report.refused} spooled capsule(s) were refused", file=sys.stderr)
    return 0


def _save_session_records(project) -> None:
    """First, as SessionEnd left them to this drainer; a failure leaves the records for the
    next drainer, is one line on stderr, and never stops the spool's drain that follows."""
    from capy.config import ConfigError, load_settings
    from capy.hooks.ended_sessions import save_session_records

    try:
        save_session_records(str(load_settings(project).settings.data_dir))
    except ConfigError as error:
        print(f"capy: the ended sessions were not saved: {error.message}", file=sys.stderr)
    except Exception as error:  # the records stay; the capsules still get drained
        print(f"capy: the ended sessions were not saved ({type(error).__name__})", file=sys.stderr)


def _learn(store) -> None:
    """Memory learns from what was just drained (capy.memory), so the next session's hooks see
    it; a failure here leaves the capsules drained and is one line on stderr."""
    from capy.memory import learn

    try:
        learn(store)
    except Exception as error:  # the drain itself succeeded: never lose that to memory
        print(
            f"capy: memory did not learn from the drained capsules ({type(error).__name__})",
            file=sys.stderr,
        )


if __name__ == "__main__":
    sys.exit(main())
