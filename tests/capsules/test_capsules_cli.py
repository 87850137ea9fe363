"""`capy capsules verify | forget`, run as the real `capy` command in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

from capy.capsules import CapsuleDraft, open_capsules


def capy(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "capy", *argv], capture_output=True, text=True, timeout=60
    )


def test_verify_says_so_when_there_is_nothing_yet() -> None:
    done = capy("capsules", "verify")
    assert (done.returncode, done.stdout) == (0, "no capsules yet: nothing to verify\n")


def test_verify_reports_each_scope_and_forget_keeps_the_chain(project_dir) -> None:
    with open_capsules(project_dir=project_dir) as capsules:
        ids = [
            appended.id
            for appended in capsules.write(
                [CapsuleDraft(kind="note", content=f"note {n}", source="cli") for n in range(3)]
            )
        ]
    done = capy("capsules", "forget", ids[1][:10], "--reason", "pasted by mistake")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"forgot capsule {ids[1][:12]} (note)")
    reports = json.loads(capy("capsules", "verify", "--json").stdout)
    assert [(r["capsules"], r["forgotten"], r["ok"]) for r in reports] == [(3, 1, True)]


def test_forget_refuses_an_unknown_id_in_one_line() -> None:
    done = capy("capsules", "forget", "abcdef123", "--reason", "x")
    assert done.returncode == 2
    assert done.stderr == "capy: no capsule has an id starting with 'abcdef123'\n"
