"""Executor overhead per call, as a ratio to a bare `subprocess.run` of the same script.

The baseline runs the same runtime executable on the same script file with both pipes
captured, which is the least any subprocess call pays; the sandboxed call adds the temp dir,
the environment, the session, the pump and the sweep for escaped processes. Goal: <= 1.5x.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from capy.bench.timing import Timing

# A small script per language that does what a typical agent snippet does: print a few lines.
_SCRIPTS = {
    "python": "for i in range(20):\n    print('line', i)\n",
    "shell": "for i in $(seq 1 20); do echo line $i; done\n",
}


def _bare(executable: str, script: Path) -> None:
    subprocess.run([executable, str(script)], capture_output=True, stdin=subprocess.DEVNULL)


def _measure_language(language: str, code: str, view, runs: int) -> dict:
    from capy.executor import execute
    from capy.executor.runtimes import find_language, resolve_runtime

    runtime = resolve_runtime(find_language(view, language))
    scratch = Path(tempfile.mkdtemp(prefix="capy-bench-exec-"))
    try:
        script = scratch / runtime.plan.file_name
        script.write_text(code, encoding="utf-8")
        bare, sandboxed = _interleaved(
            lambda: _bare(runtime.executable, script),
            lambda: execute(language, code, cwd=scratch, rules=view),
            runs,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {
        "language": language,
        "runtime": runtime.executable,
        "bare": _row(bare),
        "capy": _row(sandboxed),
        "overhead_ms": round(sandboxed.median_ms - bare.median_ms, 3),
        "ratio": round(sandboxed.median_ms / bare.median_ms, 3) if bare.median_ms else None,
    }


def _interleaved(bare, sandboxed, runs: int) -> tuple[Timing, Timing]:
    """Alternate the two, so load from other processes hits both alike (the ratio is the point)."""
    bare(), sandboxed()
    samples: tuple[list[float], list[float]] = ([], [])
    for _ in range(runs):
        for action, sink in ((bare, samples[0]), (sandboxed, samples[1])):
            start = time.perf_counter()
            action()
            sink.append((time.perf_counter() - start) * 1000)
    return _timing("bare subprocess.run", samples[0]), _timing("capy execute()", samples[1])


def _timing(name: str, samples: list[float]) -> Timing:
    samples.sort()
    p95 = samples[min(len(samples) - 1, round(0.95 * (len(samples) - 1)))]
    return Timing(name, statistics.median(samples), p95, len(samples))


def _row(timing: Timing) -> dict:
    return {"median_ms": round(timing.median_ms, 3), "p95_ms": round(timing.p95_ms, 3)}


def run(runs: int = 30) -> dict:
    from capy.executor import ExecutorError
    from capy.rules import load_rules

    view = load_rules().view("executor")
    results, skipped = [], []
    for language, code in _SCRIPTS.items():
        try:
            results.append(_measure_language(language, code, view, runs))
        except ExecutorError as exc:
            skipped.append({"language": language, "reason": str(exc)})
    return {
        "benchmark": "executor",
        "goal_ratio": 1.5,
        "runs": runs,
        "results": results,
        "skipped": skipped,
    }
