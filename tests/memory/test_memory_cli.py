"""`capy memory ...` in process, on a real capsule log: every command's output, and one clear
line for what a person gets wrong."""

from __future__ import annotations

import json

from memory_helpers import push_episode

from capy.cli import main


def _json(capsys, *argv: str):
    assert main(["memory", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_add_list_show_edit_feedback_forget_and_rebuild(store, capsys):
    store.write(push_episode("s1"))
    assert (
        main(["memory", "add", "Never", "run", "`terraform destroy`", "--type", "anti_pattern"])
        == 0
    )
    added = capsys.readouterr().out.split()[0]
    records = _json(capsys, "list")
    assert {record["type"] for record in records} == {"rule", "anti_pattern"}
    shown = _json(capsys, "show", added)
    assert shown["block_class"] == "memory.block-terraform-destroy"
    assert main(["memory", "edit", added, "--no-block"]) == 0
    assert "blocks: False" in capsys.readouterr().out
    rule = next(record for record in records if record["type"] == "rule")
    assert main(["memory", "feedback", rule["id"][:8], "helpful"]) == 0
    assert "0.55" in capsys.readouterr().out
    assert main(["memory", "forget", rule["id"][:8], "--why", "outdated"]) == 0
    capsys.readouterr()
    assert main(["memory", "rebuild"]) == 0
    assert "1 records rebuilt" in capsys.readouterr().out
    assert [record["id"][:8] for record in _json(capsys, "list")] == [added]
    stats = _json(capsys, "stats")
    assert stats["records"] == 1 and stats["blocking"] == 0
    events = [entry["event"] for entry in _json(capsys, "log")]
    assert "forgotten" in events and "learned" in events


def test_export_then_import_adds_the_records_to_another_project(store, capsys, tmp_path):
    store.write(push_episode("s1"))
    target = tmp_path / "memory.jsonl"
    assert main(["memory", "export", str(target)]) == 0
    assert "1 records written" in capsys.readouterr().out
    assert main(["memory", "forget", _json(capsys, "list")[0]["id"]]) == 0
    assert main(["memory", "import", str(target)]) == 0
    assert "1 records added" in capsys.readouterr().out
    [record] = _json(capsys, "list")
    assert record["source"] == "manual"


def test_mistakes_are_one_line_and_exit_two(store, capsys, tmp_path):
    assert main(["memory", "show", "zzzz"]) == 2
    assert main(["memory", "add", "x", "--type", "lesson"]) == 2
    assert main(["memory", "edit", "zz"]) == 2
    (tmp_path / "bad.jsonl").write_text("{oops", encoding="utf-8")
    assert main(["memory", "import", str(tmp_path / "bad.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "no memory record has an id starting with 'zzzz'" in err
    assert "unknown record type 'lesson'" in err
    assert "at least 4 characters" in err
    assert "is not a file of JSON lines" in err
