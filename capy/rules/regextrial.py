"""The timed trial `capy rules validate` runs on the regexes that overlays and given files add.

Each pattern is searched over adversarial strings (`backtracking.adversarial_inputs`) in a child
process, so a pattern that backtracks for minutes stalls the child, not validate: a pattern
that has not finished within TRIAL_SECONDS is reported, the child is killed, and a fresh one
goes on with the next pattern. The shipped packs are checked the same way by the test suite.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence

# Per pattern: a linear-time regex needs milliseconds on these inputs, an exponential one
# never finishes; a loaded machine must not turn a good pattern into a failure.
TRIAL_SECONDS = 2.0
# Long enough that exponential and high-degree polynomial blow-ups show (n^4 is 10^12 steps),
# short enough that the quadratic scan of an ordinary `\s*` or `[a-z]+@` stays well under the
# deadline (about 10^6 steps).
TRIAL_INPUT_CHARS = 1024
# A pattern run starts once per pattern: fresh children for one validate stay bounded.
MAX_CHILD_STARTS = 16
# For the child to start (imports) before the first pattern's clock runs; a loaded machine
# can take seconds.
STARTUP_SECONDS = 60.0

_CHILD = """
import json, re, sys
from capy.rules.backtracking import adversarial_inputs
patterns = json.loads(sys.stdin.readline())
length = int(sys.argv[1])
print("ready", flush=True)
for index, pattern in patterns:
    print(index, flush=True)
    try:
        compiled = re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        continue
    for text in adversarial_inputs(pattern, length):
        compiled.search(text)
print("done", flush=True)
"""


def slow_patterns(
    patterns: Sequence[str], *, seconds: float = TRIAL_SECONDS, length: int = TRIAL_INPUT_CHARS
) -> set[int]:
    """Indexes of the patterns that did not finish their trial within `seconds` each."""
    slow: set[int] = set()
    pending = list(enumerate(patterns))
    for _ in range(MAX_CHILD_STARTS):
        if not pending:
            return slow
        stalled = _run_child(pending, seconds, length)
        if stalled is None:
            return slow
        slow.add(stalled)
        pending = [(index, pattern) for index, pattern in pending if index > stalled]
    slow.update(index for index, _ in pending)  # not tried: counted as failing, fail closed
    return slow


def _run_child(pending: list[tuple[int, str]], seconds: float, length: int) -> int | None:
    """Run the trial over `pending`; the index of the pattern that stalled, or None."""
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(length)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": _package_root()},
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        child.stdin.write((json.dumps(pending) + "\n").encode())
        child.stdin.close()
        current = pending[0][0]
        deadline = [time.monotonic() + STARTUP_SECONDS]  # moved on as each pattern starts
        for line in _lines(child.stdout.fileno(), deadline):
            if line is None or line == "":  # stalled, or died (memory, a crash): fail closed
                return current
            if line == "done":
                return None
            if line != "ready":
                current = int(line)
            deadline[0] = time.monotonic() + seconds
        return current
    finally:
        child.kill()
        child.wait()


def _lines(descriptor: int, deadline: list[float]) -> Iterator[str | None]:
    """Lines from the child, read unbuffered so that a waiting line is never missed; None when
    `deadline[0]` passes first, "" at end of output."""
    pending = b""
    with selectors.DefaultSelector() as selector:
        selector.register(descriptor, selectors.EVENT_READ)
        while True:
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                yield line.decode().strip()
            if not selector.select(timeout=max(deadline[0] - time.monotonic(), 0)):
                yield None
                return
            block = os.read(descriptor, 4096)
            if not block:
                yield ""
                return
            pending += block


def _package_root() -> str:
    import capy

    return os.path.dirname(os.path.dirname(os.path.abspath(capy.__file__)))
