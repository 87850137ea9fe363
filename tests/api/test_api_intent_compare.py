"""Superlative and threshold intents, answered by sorting the records of real outputs.

"Which day had the most rain" holds no word of its answer; the reply sorts the output's
records on the field the intent names and shows the top rows verbatim under the header.
Real captured outputs of the niah-real set (dev half) through `capy_execute`'s library call,
and the comparison itself on the same files.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from capy.api.execute import execute_code
from capy.api.workspace import Workspace
from capy.rules import load_rules
from tests.niah_real_helpers import dev_intent

SET = Path(__file__).parents[2] / "fixtures" / "niah-real"
OUTPUTS = SET / "outputs"


_intent = dev_intent


@pytest.mark.parametrize(
    "intent_id",
    [
        "csv-seattle-weather-01",  # most rain: the `precipitation` column, by alias
        "csv-seattle-weather-02",  # hottest: `temp_max`, by the superlative's own field words
        "csv-seattle-weather-03",  # coldest: `temp_min`, negative values sort below zero
        "csv-stocks-01",  # highest price: the column the intent names
        "pytest-cov-click-02",  # lowest coverage: a whitespace table's `Cover` column, in %
        "git-log-stat-capy-01",  # most files: `git log --stat` records, by their counted words
        # The measure sits in a finding's message: `arguments ... (16 > 5)` with ruff's
        # ` --> path:line:col` after it; `complexity of 84` under eslint's file heading.
        "ruff-click-full-01",
        "eslint-semver-all-02",
        # `tar -tv` prints no header: a listing whose one numeric column is the file size.
        "tar-list-click-01",
        # `ls -laR` also prints a link count and a day of the month: the size is the numeric
        # column with the most distinct values; folder names and `total` lines are no rows.
        "ls-laR-jsonschema-01",
        # cProfile's abbreviated header: "called the most times" names `ncalls` by alias.
        "cprofile-markdown-it-04",
        # A one-line JUnit XML report: the `<testcase>` elements are the rows, their `time`
        # attribute the field "took" names by alias.
        "junit-six-03",
    ],
)
def test_a_superlative_is_answered_from_the_records(project_dir, intent_id):
    output, intent = _intent(intent_id)
    code = f"cat {shlex.quote(str(output.path.resolve()))}"
    reply = execute_code(Workspace(project_dir), language="shell", code=code, intent=intent.intent)
    assert "### Sorted by `" in reply.text
    assert all(needle in reply.text for needle in intent.needles), reply.text


def comparison_section(text: str, intent: str, rules):
    from capy.api.intent_compare import comparison_section

    return comparison_section(text, intent, rules)


def test_the_header_comes_with_the_rows():
    text = (OUTPUTS / "csv-seattle-weather.csv").read_text(encoding="utf-8")
    lines = comparison_section(text, "windiest day on record", load_rules())
    assert lines[1] == "### Sorted by `wind`, highest first (top 5 of 1,461 rows)"
    assert lines[2] == "date,precipitation,temp_max,temp_min,wind,weather"
    assert lines[3] == "2012/12/17,2.0,8.3,1.7,9.5,rain"


def test_a_threshold_keeps_only_the_rows_past_it():
    text = (OUTPUTS / "csv-seattle-weather.csv").read_text(encoding="utf-8")
    lines = comparison_section(text, "days with wind over 8 m/s", load_rules())
    rows = lines[3:]
    assert rows and all(float(row.split(",")[4]) > 8 for row in rows)
    assert "over 8" in lines[1]


def test_the_summary_row_never_ranks():
    text = (OUTPUTS / "pytest-cov-click.txt").read_text(encoding="utf-8")
    lines = comparison_section(text, "which module has the most statements", load_rules())
    assert lines and not any(line.startswith("TOTAL") for line in lines[3:])


@pytest.mark.parametrize(
    "intent",
    ["what was the weather on july 4th 2014", "which module has the lowest humidity"],
)
def test_no_comparison_without_a_superlative_and_a_field(intent):
    text = (OUTPUTS / "csv-seattle-weather.csv").read_text(encoding="utf-8")
    assert comparison_section(text, intent, load_rules()) == []


def test_json_records_sort_on_the_key_the_intent_names():
    # eslint's JSON report: one record per file; "errors" meets `errorCount` before the
    # other counts that also hold the word, and a long record is shown field first.
    text = (OUTPUTS / "eslint-qs.json").read_text(encoding="utf-8")
    lines = comparison_section(text, "which file has the most errors", load_rules())
    assert lines[1].startswith("### Sorted by `errorCount`, highest first")
    assert lines[2].startswith('{"errorCount": 2, "filePath": "/home/dev/lint/qs/lib/utils.js"')


def test_xml_elements_are_rows_and_html_is_not_read_so():
    text = (OUTPUTS / "junit-six.xml").read_text(encoding="utf-8")
    lines = comparison_section(text, "which tests were the slowest", load_rules())
    assert lines[1] == "### Sorted by `time`, highest first (top 5 of 200 rows)"
    assert lines[2].startswith("<testcase ") and 'time="0.044"' in lines[2]
    page = "<!DOCTYPE html>" + "".join(f'<td width="{n}">cell</td>' for n in range(9))
    assert comparison_section(page, "which cell is the widest", load_rules()) == []


def test_a_named_day_finds_the_rows_dated_so(project_dir):
    # The set's own csv-seattle-weather-05: "july 4th 2014" against `2014/07/04,...`.
    output, intent = _intent("csv-seattle-weather-05")
    code = f"cat {shlex.quote(str(output.path.resolve()))}"
    reply = execute_code(Workspace(project_dir), language="shell", code=code, intent=intent.intent)
    assert "### Lines dated July 4, 2014 (1 of 1)" in reply.text
    assert all(needle in reply.text for needle in intent.needles), reply.text


@pytest.mark.parametrize(
    ("intent", "line"),
    [
        ("requests on 4 Jul 2014", '127.0.0.1 - - [04/Jul/2014:10:00:01 +0000] "GET / HTTP/1.1"'),
        ("what happened on july 4", "2014-07-04T10:00:01Z started"),
        ("the entry for Jul 4th, 2014", "Released Jul 4, 2014"),
        ("builds on the 4th of july 2014", "07/04/2014 build 12 ok"),
    ],
)
def test_a_named_day_meets_the_forms_tools_print_it_in(intent, line):
    from capy.api.intent_dates import date_section

    text = "\n".join(["header line", "2014-07-05 other day", line, "04/Aug/2014 not it"])
    shown = date_section(text, intent, load_rules())
    # The header line (no digits) heads the dated ones; other days stay out.
    assert shown[2:] == ["header line", line], shown


def test_a_listing_without_a_header_compares_on_its_one_measure():
    text = (OUTPUTS / "tar-list-click.txt").read_text(encoding="utf-8")
    lines = comparison_section(text, "what is the largest file in the archive", load_rules())
    assert lines[1] == "### Sorted by `column 3`, highest first (top 5 of 125 rows)"
    assert lines[2].endswith("click-8.5.1/uv.lock")
    # A threshold needs a named field: a listing's column is never one.
    assert comparison_section(text, "files over 100000 bytes", load_rules()) == []


def test_sizes_compare_by_what_their_units_stand_for():
    # The listing above printed the way `ls -lh` and `du -h` print sizes: K beside M.
    rows = [line.split() for line in (OUTPUTS / "tar-list-click.txt").read_text().splitlines()]
    human = "\n".join(
        f"{perms} {owner} {_human(int(size))} {day} {time} {name}"
        for perms, owner, size, day, time, name in rows
    )
    lines = comparison_section(human, "what is the largest file in the archive", load_rules())
    assert lines[2].endswith("click-8.5.1/uv.lock") and " 252K " in lines[2]


def _human(size: int) -> str:
    for unit in ("", "K", "M"):
        if size < 1024:
            return f"{size}{unit}"
        size //= 1024
    return f"{size}G"


def test_a_line_number_after_a_path_is_not_a_measure():
    # "which tests were the slowest" on a run that only failed to collect: `test/test_api.py:3`
    # holds the word `test` and a number, but it is where a frame sits, not how long it took.
    text = (OUTPUTS / "pytest-tabulate-durations.txt").read_text(encoding="utf-8")
    assert comparison_section(text, "which tests were the slowest", load_rules()) == []


def test_a_column_that_never_varies_is_no_measure():
    # yamllint's lines `7:3  error  wrong indentation: expected 4 but found 2` are most of
    # its output and hold the same numbers on every line: sorting on them answered "which
    # line is the longest" with five indentation errors. The measure is in the other
    # findings' message, `line too long (114 > 80 characters)`.
    output, intent = _intent("yamllint-gcloud-01")
    lines = comparison_section(output.path.read_text(encoding="utf-8"), intent.intent, load_rules())
    assert "column" not in lines[1]
    assert intent.needles[0] in lines[2] + lines[3], lines


def test_how_often_is_answered_by_counting_the_messages_printed(project_dir):
    # "Which misspelling is reported most often": no column counts them and `misspelling` is
    # nowhere in codespell's output, so the reply said nothing matched. Counted with their
    # locations left out, `SER ==> SET` is printed 14 times.
    output, intent = _intent("codespell-sphinx-03")
    code = f"cat {shlex.quote(str(output.path.resolve()))}"
    reply = execute_code(Workspace(project_dir), language="shell", code=code, intent=intent.intent)
    assert "### Messages by times printed, most first" in reply.text
    assert f"14× {intent.needles[0]}" in reply.text, reply.text


def test_counting_needs_a_word_of_frequency_and_a_message_printed_twice():
    text = (OUTPUTS / "codespell-sphinx.txt").read_text(encoding="utf-8")
    assert comparison_section(text, "which misspelling is the most serious", load_rules()) == []
    once = "\n".join(f"src/a.py:{n}: word{n} ==> other{n}" for n in range(9))
    assert comparison_section(once, "which typo is reported most often", load_rules()) == []
    least = comparison_section(text, "which misspelling is reported least often", load_rules())
    assert least[1].startswith("### Messages by times printed, fewest first")
    assert least[2].startswith("1× ")
