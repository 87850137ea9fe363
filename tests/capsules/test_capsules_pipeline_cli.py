"""`capy capsules distill`, `status` and `rebuild` on a real capsule log."""

from __future__ import annotations

import json

from capy.capsules import CapsuleDraft
from capy.cli import main


def test_distill_status_and_rebuild(capsules, capsys, monkeypatch, project_dir):
    monkeypatch.chdir(project_dir)
    capsules.write(
        [CapsuleDraft(kind="note", content=f"pytest failed {i}", source="cli") for i in range(3)]
    )
    assert main(["capsules", "status", "--json"]) == 0
    chunk = json.loads(capsys.readouterr().out)["stages"][0]
    assert (chunk["stage"], chunk["ready"], chunk["done"]) == ("chunk", 3, 0)
    assert main(["capsules", "distill", "--drain"]) == 0
    assert capsys.readouterr().out.startswith("ran ")
    assert main(["capsules", "status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["stages"][0]["done"] == 3
    assert main(["capsules", "rebuild", "--stage", "chunk"]) == 0
    assert "enqueued 6 jobs" in capsys.readouterr().out  # chunk, and embed which reads chunks


def test_an_unknown_stage_is_one_line(capsules, capsys, monkeypatch, project_dir):
    monkeypatch.chdir(project_dir)
    assert main(["capsules", "distill", "--stage", "nope"]) == 2
    err = capsys.readouterr().err
    assert "no pipeline stage named 'nope'" in err and "Traceback" not in err
