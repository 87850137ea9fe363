"""Superlatives on outputs where one kind of row repeats: a listing of many equal folders, a
checker printing one finding with a different figure each time. Real tools run on files made
for the test (`ls -l`, `ruff check`), and real captured outputs of the niah-real set's dev
half."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from capy.api.execute import execute_code
from capy.api.intent_compare import comparison_section
from capy.api.workspace import Workspace
from capy.rules import load_rules

OUTPUTS = Path(__file__).parents[2] / "fixtures" / "niah-real" / "outputs"


def test_a_listing_of_many_equal_folders_still_has_sizes(project_dir):
    # `ls -l` of 400 folders (one size each) beside a 9 MB model and a 512-byte README: the
    # size column held 3 distinct values among 402 rows, under the distinct-values share that
    # was meant to reject a repeated lint message, and "which file is the largest" was told
    # nothing matched.
    listed = project_dir / "listed"
    listed.mkdir()
    for n in range(400):
        (listed / f"pkg{n:03d}").mkdir()
    with (listed / "model.bin").open("wb") as model:
        model.truncate(9182736)
    (listed / "README").write_bytes(b"x" * 512)
    reply = execute_code(
        Workspace(project_dir),
        language="shell",
        code="ls -l listed",
        intent="which file is the largest",
    )
    shown = reply.text.split("### Sorted by", 1)
    assert len(shown) == 2, reply.text
    top = shown[1].splitlines()[1]
    assert top.endswith(" model.bin") and " 9182736 " in top, reply.text


def _ruff_run(folder: Path) -> str:
    """ruff's concise report on a file with 30 lines too long (each its own length), 8
    comparisons to None and 3 unused imports."""
    ruff = Path(sys.executable).with_name("ruff")
    if not ruff.exists():
        ruff = Path(shutil.which("ruff") or "")
    if not ruff.is_file():
        pytest.skip("ruff is not installed beside this interpreter or on PATH")
    lines = ["import os", "import sys", "import json", ""]
    lines += [f"VALUE_{n} = '{'x' * (75 + n)}'" for n in range(30)]
    lines += [f"if VALUE_{n} == None:\n    pass" for n in range(8)]
    (folder / "a.py").write_text("\n".join(lines) + "\n")
    argv = [str(ruff), "check", "--no-cache", "--isolated", "--select", "E501,E711,F401"]
    argv += ["--line-length", "79", "--output-format", "concise", "a.py"]
    return subprocess.run(argv, cwd=folder, capture_output=True, text=True, check=False).stdout


def test_how_often_counts_a_message_apart_from_the_figures_it_states(tmp_path):
    # `E501 Line too long (87 > 79)` states another length on each of its 30 lines: counted
    # as printed, each was a message of its own and the 8 identical E711 lines ranked first.
    output = _ruff_run(tmp_path)
    assert output.count(" E501 ") == 30
    lines = comparison_section(output, "which check is reported most often", load_rules())
    assert lines[2] == "30× E501 Line too long (87 > 79)", lines
    assert lines[3].startswith("8× E711 "), lines


def test_how_often_counts_messages_in_any_script():
    # Messages of letters outside A-Z were no message at all: nothing was counted.
    text = "\n".join(
        ["src/a.c:3:1: ошибка: неизвестный тип имени"] * 5
        + ["src/a.c:9:1: предупреждение: неявное объявление функции"] * 2
        + ["src/b.c:4:2: ошибка: ожидалась точка с запятой"]
    )
    lines = comparison_section(text, "which message is printed most often", load_rules())
    assert lines[2] == "5× ошибка: неизвестный тип имени", lines


@pytest.mark.parametrize(
    ("name", "first"),
    [
        # ruff's full format says where each finding is on a line of its own (` --> path:1:1`).
        ("ruff-click-full.txt", "63× FBT001 Boolean-typed positional argument"),
        # pytest's `file /path/test_x.py, line 24` under each setup error.
        ("pytest-humanize-ra.txt", "15× E       fixture 'benchmark' not found"),
    ],
)
def test_a_line_saying_only_where_is_counted_per_place(name, first):
    # Masking every number made the location lines of a file one message, printed more often
    # than any finding: a line or column number says where, not a figure of the message.
    text = (OUTPUTS / name).read_text(encoding="utf-8")
    lines = comparison_section(text, "which message is printed most often", load_rules())
    assert lines[2].startswith(first), lines
