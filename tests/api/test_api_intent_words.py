"""Intent replies on real captured outputs whose answer hinges on one word's form or on a word
that used to be a stopword (issue #17, failure classes 3 and 4).

Each output is a dev-half file of fixtures/niah-real; each question is an agent's wording whose
locating word porter alone does not bring to the output's line ("merged" against `Merge
branch`, "case-sensitive" against `case-insensitive`) or that the stopword list dropped
("search", "used"). Everything runs for real: `capy_execute`'s library call on `cat` of the
file, a real encrypted store, the reply as the agent reads it.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from capy.api.execute import execute_code
from capy.api.workspace import Workspace
from capy.bench.niah_real_set import load_real_set

SET = Path(__file__).parents[2] / "fixtures" / "niah-real"


def _reply(project_dir: Path, file: str, intent: str) -> str:
    output = next(o for o in load_real_set(SET).outputs if o.file == file)
    assert output.half == "dev", f"{file} is in the held half: tests are built on the dev half"
    code = f"cat {shlex.quote(str(output.path.resolve()))}"
    return execute_code(Workspace(project_dir), language="shell", code=code, intent=intent).text


@pytest.mark.parametrize(
    ("file", "intent", "needles"),
    [
        # The set's own intent git-log-stat-capy-04: merged/Merge and branches/branch meet
        # only under Porter's stemming, which the porter table applied and line selection
        # did not.
        ("git-log-stat-capy.txt", "which branches were merged",
         ["Merge branch 'fix/setup'", "Merge branch 'fix/sandbox'"]),
        # A negation prefix: the output prints the negated form of the question's word.
        ("pydoc-boltons-iterutils.html", "how do I sort case-sensitive", ["case-insensitive"]),
        # "used" was a stopword, and it meets `unused` only through its negated form.
        ("gcc-warnings-markupsafe.txt", "what is never used", ["unused parameter"]),
        # The set's own pip-show-files-cryptography-02: the verb the agent uses ("depend")
        # and the one the tool prints (`Requires:`, `Required-by:`) share no stem; the search
        # pack's synonym group links them.
        ("pip-show-files-cryptography.txt", "what does it depend on and what depends on it",
         ["Requires: cffi", "Required-by: capy-mcp"]),
    ],
)  # fmt: skip
def test_a_word_form_porter_misses_still_finds_its_line(project_dir, file, intent, needles):
    text = _reply(project_dir, file, intent)
    assert all(needle in text for needle in needles), text


@pytest.mark.parametrize(
    ("intent", "needle"),
    [
        ("which search tests were added", "hostile words in the search box"),
        ("which commit fixed the search snippets", "search snippets printed stored escape"),
    ],
)
def test_search_is_a_locating_word_not_a_stopword(project_dir, intent, needle):
    text = _reply(project_dir, "git-log-stat-capy.txt", intent)
    assert needle in text, text


@pytest.mark.parametrize(
    ("file", "intent", "needles"),
    [
        # The set's own tar-list-click-03: a project names its changelog CHANGES.md.
        ("tar-list-click.txt", "does the sdist ship the changelog", ["click-8.5.1/CHANGES.md"]),
        # The set's own git-diff-attrs-src-01: type stubs live in `.pyi` files.
        ("git-diff-attrs-src.txt", "how did the signature of fields() change in the stubs",
         ["+def fields(cls: type[AttrsInstance] | AttrsInstance) -> Any: ..."]),
    ],
)  # fmt: skip
def test_a_file_named_by_convention_is_found_by_what_people_call_it(
    project_dir, file, intent, needles
):
    text = _reply(project_dir, file, intent)
    assert all(needle in text for needle in needles), text


def test_words_the_question_joins_find_the_key_and_its_nested_values(project_dir):
    # The set's own openapi-stripe-head-02: "business types" meets `business_type:` as one
    # thing (the words side by side), and that indented key shows the lines nested under it,
    # its `enum:` values, before weaker lines about "account" fill the section.
    text = _reply(
        project_dir, "openapi-stripe-head.yaml", "which business types can an account have"
    )
    assert "- government_entity" in text and "- non_profit" in text, text


def test_a_lone_capital_letter_is_a_locating_word(project_dir):
    # The set's own radon-cc-radon-05: "ranked C" asks for radon's grade letter; a single
    # character was below the query's shortest term, so only "blocks" and "ranked" were left,
    # and no line of the C-graded blocks was shown.
    text = _reply(project_dir, "radon-cc-radon.txt", "which blocks are ranked C")
    for needle in ("F 185:0 analyze - C (15)", "M 276:4 RawHarvester.to_terminal - C (12)"):
        assert needle in text, text
