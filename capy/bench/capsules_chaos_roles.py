"""The processes of `capy bench capsules-chaos`: a capturer writing capsules in small batches,
and a pipeline worker draining forever (until it is killed). Run as
`python -m capy.bench.capsules_chaos_roles capture PROJECT INDEX COUNT` or `... work PROJECT NAME
LEASE`; the capsule log and its key come from the environment the bench sets."""

from __future__ import annotations

import sys
import time
from pathlib import Path

# Realistic capsule texts the extractors and summaries have something to find in.
TEXTS = (
    "pytest failed: KeyError in capy/store/database.py",
    "editing settings.py fixed the KeyError",
    "We decided to keep SQLite as the default.",
    "import httpx\nfrom sqlcipher3 import dbapi2",
    "thanks @alice, open_database() raised OperationalError",
    "$ git status\nOn branch main, nothing to commit",
)
BATCH = 2
PACE_S = 0.15


def capture(project: Path, index: int, count: int) -> None:
    from capy.capsules import CapsuleDraft, open_capsules

    with open_capsules(project_dir=project) as store:
        for start in range(0, count, BATCH):
            drafts = [
                CapsuleDraft(
                    kind="note",
                    content=f"{TEXTS[(index + i) % len(TEXTS)]} (capturer {index}, #{i})",
                    source="hook",
                    metadata={"session_id": f"chaos-{index}"},
                )
                for i in range(start, min(start + BATCH, count))
            ]
            store.write(drafts)
            time.sleep(PACE_S)


def work(project: Path, name: str, lease: float) -> None:
    from capy.capsules import open_capsules
    from capy.capsules.pipeline.worker import Worker

    with open_capsules(project_dir=project) as store:
        worker = Worker(store, name, lease_seconds=lease)
        print("ready", flush=True)
        while True:
            worker.drain()
            time.sleep(0.02)


if __name__ == "__main__":
    role, project = sys.argv[1], Path(sys.argv[2])
    if role == "capture":
        capture(project, int(sys.argv[3]), int(sys.argv[4]))
    else:
        work(project, sys.argv[3], float(sys.argv[4]))
