"""`capy recall` in a real subprocess: briefs per query, and the JSON a script reads."""

from __future__ import annotations

import json
import subprocess
import sys

from capy.capsules import CapsuleDraft, open_capsules
from capy.capsules.pipeline import drain


def _capy(project_dir, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "capy", *args],
        cwd=project_dir,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_recall_prints_a_brief_per_query_and_json_items(project_dir):
    with open_capsules(project_dir=project_dir) as store:
        store.write(
            [
                CapsuleDraft(
                    "error",
                    "npm test failed: TypeError: cannot read properties of undefined",
                    "cli",
                    {"session_id": "s-9", "command": "npm test"},
                ),
                CapsuleDraft("decision", "Pin node to 20 in .nvmrc for the CI runners.", "cli"),
            ]
        )
        # Derived here, to the end: the command's own catch-up is one bounded round (the pack's
        # worker.round_seconds), which a loaded machine can spend before the second capsule is
        # chunked (with the semantic extra, on loading the model), and this test is about what
        # the command prints, not about how far that round gets.
        drain(store)
    shown = _capy(project_dir, "recall", "npm test TypeError", "node version CI", "--budget", "300")
    assert shown.returncode == 0, shown.stderr
    assert "## Recalled for `npm test TypeError`" in shown.stdout
    assert "## Recalled for `node version CI`" in shown.stdout
    as_json = _capy(project_dir, "recall", "npm test TypeError", "--json")
    assert as_json.returncode == 0, as_json.stderr
    (first,) = json.loads(as_json.stdout)["queries"]
    item = first["items"][0]
    assert {"capsule_id", "kind", "session_id", "score", "text"} <= set(item)
    assert (item["kind"], item["session_id"]) == ("error", "s-9")
    assert first["brief"].startswith("## Recalled for")


def test_recall_without_a_query_or_with_a_bad_kind_is_one_line(project_dir):
    empty = _capy(project_dir, "recall")
    assert empty.returncode == 2 and "give a query" in empty.stderr
    wrong = _capy(project_dir, "recall", "x", "--kind", "memo")
    assert wrong.returncode == 2 and "Traceback" not in wrong.stderr
    assert "memo" in wrong.stderr
