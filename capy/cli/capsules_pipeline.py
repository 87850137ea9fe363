"""`capy capsules distill`, `status` and `rebuild`: thin shells over `capy.capsules.pipeline`."""

from __future__ import annotations

from typing import Annotated

from cyclopts import Parameter

from capy.cli.capsules import PathOption
from capy.cli.guard import guarded
from capy.cli.output import say
from capy.cli.store import JsonFlag

StageOption = Annotated[
    list[str] | None,
    Parameter(name="--stage", help="Only this stage (repeat for more): chunk, extract, ..."),
]


def distill(
    *,
    drain_all: Annotated[bool, Parameter(name="--drain", negative=())] = False,
    stage: StageOption = None,
    path: PathOption = None,
) -> int:
    """Run the distillation pipeline over capsules waiting for it.

    Parameters
    ----------
    drain_all
        Run until no job is left (otherwise one round of at most the pack's worker.round_seconds).
    stage
        Only this stage (repeat for more).
    path
        Capsule log to use instead of the default (also CAPY_CAPSULES_PATH).
    """

    def run() -> int:
        import time

        from capy.capsules import open_capsules
        from capy.capsules.pipeline import drain

        with open_capsules(path) as store:
            worker = store.rules.view("capsules").worker
            deadline = None if drain_all else time.monotonic() + worker.round_seconds
            report = drain(store, stages=stage, deadline=deadline)
        done = ", ".join(f"{name} {count}" for name, count in sorted(report.done.items()))
        say(
            f"ran {report.total_done} jobs in {report.seconds:.1f} s"
            + (f": {done}" if done else "")
        )
        if report.failed:
            failed = ", ".join(f"{name} {count}" for name, count in sorted(report.failed.items()))
            say(f"failed (will retry): {failed}; `capy capsules status` shows the errors")
        if report.stopped_by_deadline:
            say("more jobs wait: run again, or use --drain to run until none is left")
        return 0

    return guarded(run)


def status(*, as_json: JsonFlag = False, path: PathOption = None) -> int:
    """Show the pipeline's backlog per stage: ready, running, done, dead and stale jobs.

    Parameters
    ----------
    as_json
        Print the counts as JSON.
    path
        Capsule log to use instead of the default (also CAPY_CAPSULES_PATH).
    """

    def run() -> int:
        from capy.capsules import open_capsules
        from capy.capsules.pipeline.versions import find_models, run_versions
        from capy.cli.output import print_json

        with open_capsules(path) as store:
            versions = run_versions(store, find_models(store))
            backlog = store.backend.backlog(versions)
            errors = store.backend.dead_jobs(limit=5)
        rows = [
            {
                "stage": item.stage,
                "ready": item.ready,
                "running": item.running,
                "done": item.done,
                "dead": item.dead,
                "stale": item.stale,
                "version": versions[item.stage],
            }
            for item in backlog
        ]
        if as_json:
            print_json(
                {
                    "stages": rows,
                    "dead_jobs": [
                        dict(zip(("stage", "target", "error"), e, strict=True)) for e in errors
                    ],
                }
            )
            return 0
        say(f"{'stage':<10} {'ready':>7} {'running':>8} {'done':>8} {'dead':>6} {'stale':>6}")
        for row in rows:
            say(
                f"{row['stage']:<10} {row['ready']:>7} {row['running']:>8} {row['done']:>8} "
                f"{row['dead']:>6} {row['stale']:>6}"
            )
        for stage_name, target, error in errors:
            say(f"dead: {stage_name} {target[:12]}: {error}")
        return 0

    return guarded(run)


def rebuild(*, stage: StageOption = None, path: PathOption = None) -> int:
    """Drop derived rows (of --stage, and of the stages that read them) and enqueue them again
    from the capsules alone; `capy capsules distill --drain` then recomputes them.

    Parameters
    ----------
    stage
        Only this stage (repeat for more); every stage when absent.
    path
        Capsule log to use instead of the default (also CAPY_CAPSULES_PATH).
    """

    def run() -> int:
        from capy.capsules import open_capsules
        from capy.capsules.pipeline import rebuild as rebuild_stages

        with open_capsules(path) as store:
            enqueued = rebuild_stages(store, stage)
        say(
            f"dropped the derived rows and enqueued {enqueued} jobs: "
            "run `capy capsules distill --drain`"
        )
        return 0

    return guarded(run)
