"""Small timing helpers: repeat, take the median, compare to a baseline measured in the same run."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Timing:
    name: str
    median_ms: float
    p95_ms: float
    runs: int


def measure(name: str, action: Callable[[], object], runs: int, warmup: int = 1) -> Timing:
    for _ in range(warmup):
        action()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    p95 = samples[min(len(samples) - 1, round(0.95 * (len(samples) - 1)))]
    return Timing(name, statistics.median(samples), p95, runs)
