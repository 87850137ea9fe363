"""`capy rules gen` regenerates every generated file, docs/tools.md included, and `--check`
(what `just lint` runs) fails on its drift: it left the tools' reference out."""

from __future__ import annotations

from capy.cli import main
from capy.server.docs import render_tools_markdown


def test_gen_checks_and_writes_the_tools_reference(tmp_path, monkeypatch, capsys) -> None:
    docs = tmp_path / "docs"
    assert main(["rules", "docs", "--output", str(docs / "rules.md")]) == 0
    (docs / "tools.md").write_text("# stale\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["rules", "gen", "--check"]) == 1
    assert "docs/tools.md is out of date" in capsys.readouterr().err
    assert main(["rules", "gen"]) == 0
    assert (docs / "tools.md").read_text(encoding="utf-8") == render_tools_markdown()
    assert main(["rules", "gen", "--check"]) == 0
