"""The capture spool drainer's first steps, taken before it imports anything else of capy.

`capy.hooks.capture.start_drainer` starts `python -I -S -c` with a one-line start that puts
capy's folder on the path and calls `run()` here, with `PROJECT [--niceness N] [--after-exit]`:

1. lower the CPU priority (`--niceness`, the capsules pack's `worker.background_niceness`):
   first, so that none of the drainer's start (site-packages, the capsule log's imports, a few
   tens of milliseconds) competes with the agent at normal priority;
2. with `--after-exit`, wait until stdin reaches its end: the hook that started the drainer
   holds the pipe's other end and the kernel closes it when that hook exits. A SessionEnd hook
   starts the drainer as its last act, and its own exit (writing the answer, the interpreter's
   teardown) is what the agent waits for; a drainer running beside it slowed it by tens of
   milliseconds on a busy 2-core machine;
3. load `site` (the start ran without it, as hooks do) and drain (`capy.capsules.drain.main`).

Only the standard library is imported here, and this module is outside `capy.capsules`, whose
package imports the store.
"""

from __future__ import annotations

import os
import sys

AFTER_EXIT = "--after-exit"
NICENESS = "--niceness"


def run(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    after_exit = AFTER_EXIT in args
    args = [arg for arg in args if arg != AFTER_EXIT]
    if NICENESS in args[:-1]:
        at = args.index(NICENESS)
        lower_priority(args[at + 1])
        del args[at : at + 2]
    if after_exit:
        wait_for_end_of_input()
    _load_site()
    from capy.capsules.drain import main

    sys.exit(main(args))


def wait_for_end_of_input() -> None:
    """Block until stdin is at its end (its writer exited) or unreadable."""
    while True:
        try:
            if not os.read(0, 4096):
                return
        except InterruptedError:
            continue
        except OSError:
            return


def lower_priority(niceness: object) -> None:
    """`os.nice` for a process that does only background work; a value that is not a number,
    or a system that refuses, leaves the priority as it is."""
    try:
        os.nice(max(0, int(str(niceness))))
    except (ValueError, OSError, AttributeError):
        return


def _load_site() -> None:
    if sys.flags.no_site:
        import site

        site.main()
