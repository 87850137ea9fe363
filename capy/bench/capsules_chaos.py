"""`capy bench capsules-chaos`: nothing is lost when pipeline workers die mid-job.

Capture processes write capsules while a pipeline worker is started and `kill -9`ed again and
again, each time while it holds leased jobs (mid-job). Afterwards a worker drains what is left
and the bench counts: every capsule present exactly once, every scope's chain verifying, every
capsule with a row (a done job at the current version) for every stage, every scope summarised
up to its newest capsule. The floor is the count written: each figure is a count out of it.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROLES = "capy.bench.capsules_chaos_roles"
# Short, so the final drain reclaims the killed workers' jobs without a minute's wait.
LEASE_S = 1.5


@dataclass
class ChaosReport:
    processes: int
    written: int
    kills: int
    kills_mid_job: int = 0
    stored: int = 0
    distinct: int = 0
    chains_ok: int = 0
    scopes: int = 0
    derived: dict[str, int] = field(default_factory=dict)
    summarised_scopes: int = 0
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return (
            self.kills_mid_job == self.kills
            and self.stored == self.distinct == self.written
            and self.chains_ok == self.scopes
            and all(count == self.written for count in self.derived.values())
            and self.summarised_scopes == self.scopes
        )

    def lines(self) -> list[str]:
        derived = ", ".join(f"{stage} {n}/{self.written}" for stage, n in self.derived.items())
        return [
            f"capsules-chaos: {self.processes} capture processes, {self.kills} kill -9 of a "
            f"pipeline worker ({self.seconds:.0f} s)",
            f"  kills mid-job      {self.kills_mid_job}/{self.kills}",
            f"  capsules once      {self.distinct}/{self.written} (rows stored: {self.stored})",
            f"  chains verify      {self.chains_ok}/{self.scopes} scopes",
            f"  all derived        {derived}",
            f"  summarised         {self.summarised_scopes}/{self.scopes} scopes up to their head",
            f"  result             {'ok' if self.ok else 'FAILED'}",
        ]


def run(processes: int = 8, per_process: int = 150, kills: int = 20) -> ChaosReport:
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="capy-chaos-") as scratch:
        root = Path(scratch)
        project = root / "project"
        (project / ".git").mkdir(parents=True)
        env = _environment(root)
        os.environ.update(env)  # this process opens the same log
        report = ChaosReport(processes, processes * per_process, kills)
        capturers = [
            _spawn(env, "capture", project, str(i), str(per_process)) for i in range(processes)
        ]
        for k in range(kills):
            report.kills_mid_job += _kill_mid_job(env, project, f"chaos-{k}")
        for child in capturers:
            child.wait()
        time.sleep(LEASE_S + 0.2)  # the last killed worker's leases run out
        _finish_and_count(project, report)
    report.seconds = time.monotonic() - started
    return report


def _environment(root: Path) -> dict[str, str]:
    return {
        "HOME": str(root / "home"),
        "XDG_DATA_HOME": str(root / "data"),
        "XDG_CONFIG_HOME": str(root / "config"),
        "CAPY_CAPSULES_PATH": str(root / "capsules.db"),
    }


def _spawn(env: dict[str, str], *args: str | Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", ROLES, *map(str, args)],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )


def _kill_mid_job(env: dict[str, str], project: Path, name: str) -> int:
    """Start a worker, kill -9 it while it holds leased jobs; 1 when it did."""
    from capy.capsules import open_capsules

    worker = _spawn(env, "work", project, name, str(LEASE_S))
    assert worker.stdout is not None
    worker.stdout.readline()  # "ready": its store is open
    mid_job = False
    with open_capsules(project_dir=project) as store:
        give_up = time.monotonic() + 10
        while time.monotonic() < give_up and not mid_job:
            time.sleep(random.uniform(0.0, 0.03))
            mid_job = _holds_leases(store.conn, name)
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait()
        mid_job = mid_job and _holds_leases(store.conn, name)  # its claims outlive it
    return int(mid_job)


def _holds_leases(conn, name: str) -> bool:  # type: ignore[no-untyped-def]
    row = conn.execute(
        "SELECT count(*) FROM capsule_jobs WHERE state = 'running' AND lease_owner = ?", (name,)
    ).fetchone()
    return int(row[0]) > 0


def _finish_and_count(project: Path, report: ChaosReport) -> None:
    from capy.capsules import open_capsules
    from capy.capsules.pipeline.worker import Worker
    from capy.capsules.sqlite import pipeline as sql

    with open_capsules(project_dir=project) as store:
        worker = Worker(store, "chaos-final", lease_seconds=LEASE_S)
        for _ in range(20):
            if not worker.drain().total_done:
                break
        conn = store.conn
        report.stored, report.distinct = conn.execute(
            "SELECT count(*), count(DISTINCT id) FROM capsules"
        ).fetchone()
        reports = store.verify()
        report.scopes = len(reports)
        report.chains_ok = sum(1 for each in reports if each.ok)
        for stage in store.rules.view("capsules").live_stages:
            if stage.per == "capsule":
                missing = sql.missing_rows(conn, stage.name, worker.versions[stage.name])
                report.derived[stage.name] = report.stored - missing
        chunked = conn.execute("SELECT count(*) FROM capsule_chunk_sets").fetchone()[0]
        report.derived["chunk"] = min(report.derived.get("chunk", 0), int(chunked))
        report.summarised_scopes = sum(
            1
            for scope, (seq, _) in store.backend.heads().items()
            if sql.progress(conn, "summarise", scope) == seq
        )
