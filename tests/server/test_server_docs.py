"""docs/tools.md is generated from the registered tools; a difference is drift."""

from __future__ import annotations

from pathlib import Path

from capy.server.docs import render_tools_markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "tools.md"


def test_tools_reference_matches_the_server():
    expected = render_tools_markdown()
    assert DOC.read_text(encoding="utf-8") == expected, (
        "docs/tools.md is out of date; regenerate it with `capy rules gen` (or `just gen`) "
        "from the repository root"
    )
