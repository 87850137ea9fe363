""" "It never holds `X`" is said only when it is true, and a short output is withheld only on
sure signs.

A term the output lacks as stored is still held when the command that ran names it (`npm
outdated` never prints `npm`), when the output as printed holds it (the stored copy is
redacted, and cut in the middle above the size cap), or, for a number, when it is there with
digit separators (`1,234`). Abbreviations and other developer words (`repos`, `k8s`,
`stderr`) ask about a kind of thing, not one thing, so their absence proves nothing; a count
or a position (`last 10`, `line 42`) is not a value to find. Every case runs `capy_execute`'s
library call for real: a real shell, a real encrypted store.
"""

from __future__ import annotations

import shlex

import pytest

from capy.api.execute import execute_code
from capy.api.workspace import Workspace

NPM_OUTDATED = """\
Package            Current   Wanted   Latest  Location                        Depended by
@types/node        20.11.5  20.11.30  22.1.0  node_modules/@types/node        web
eslint              8.56.0    8.57.0   9.2.0  node_modules/eslint             web
lodash             4.17.20   4.17.21 4.17.21  node_modules/lodash             web
typescript           5.3.3     5.4.5   5.4.5  node_modules/typescript         web
vite                 5.0.12    5.2.11  5.2.11  node_modules/vite               web
"""

GH_REPO_LIST = """\
octo-org/website        The public site                       public    2026-11-30T10:02:11Z
octo-org/billing        Invoices and payment runs             private   2026-11-28T08:40:03Z
octo-org/infra          Terraform for every environment       private   2026-11-21T17:12:45Z
octo-org/design-system  Shared components                     public    2026-10-02T09:00:00Z
octo-org/handbook       How we work                           internal  2026-09-14T12:30:00Z
"""

KUBECTL_PODS = """\
NAME                          READY   STATUS             RESTARTS       AGE
api-7d9f8c6b5-2xkqp           1/1     Running            0              3d2h
api-7d9f8c6b5-9mzrt           1/1     Running            4 (2h ago)     3d2h
worker-5c6d7f8b9-lqwer        0/1     CrashLoopBackOff   17 (40s ago)   1d1h
redis-0                       1/1     Running            0              12d
"""

PYTEST_RUN = "".join(
    f"tests/test_mod{n}.py ....................................\n" for n in range(6)
)
PYTEST_RUN += "=============== 1,234 passed, 3 skipped in 41.07s ===============\n"


def _run(project_dir, tmp_path, program: str, output: str, intent: str, args: str = "") -> str:
    """The reply to `program args` printing `output`, the program being a shell function so
    that the command names it and the output does not."""
    printed = tmp_path / "printed.txt"
    printed.write_text(output, encoding="utf-8")
    code = f"{program}() {{ cat {shlex.quote(str(printed))}; }}\n{program} {args}".rstrip()
    reply = execute_code(Workspace(project_dir), language="shell", code=code, intent=intent)
    return reply.text


def test_the_program_that_ran_holds_the_words_of_its_name(project_dir, tmp_path):
    text = _run(
        project_dir, tmp_path, "npm", NPM_OUTDATED, "which npm packages are outdated", "outdated"
    )
    assert "never holds" not in text, text
    assert "lodash             4.17.20" in text  # the output, whole as before


@pytest.mark.parametrize(
    ("program", "output", "intent", "needle"),
    [
        ("gh", GH_REPO_LIST, "which repos are private", "octo-org/billing"),
        ("kubectl", KUBECTL_PODS, "did any k8s pods restart", "CrashLoopBackOff"),
    ],
)
def test_an_abbreviation_the_output_lacks_does_not_withhold_it(
    project_dir, tmp_path, program, output, intent, needle
):
    text = _run(project_dir, tmp_path, program, output, intent)
    assert "never holds" not in text, text
    assert needle in text, text


def test_a_number_is_held_with_its_digit_separators(project_dir, tmp_path):
    text = _run(project_dir, tmp_path, "pytest", PYTEST_RUN, "did 1234 tests pass")
    assert "never holds" not in text, text
    assert "1,234 passed" in text, text


def test_a_redacted_value_is_not_called_absent(project_dir, tmp_path):
    # The stored copy has the assignment's value redacted; the output as printed holds it.
    output = "".join(f"setting_{n} = enabled\n" for n in range(12))
    output += 'db_password = "quarkhunterpassphrase"\n'
    text = _run(project_dir, tmp_path, "show", output, "is quarkhunterpassphrase the password")
    assert "never holds" not in text, text


@pytest.mark.parametrize(
    ("query", "term", "specific"),
    [
        ("which repos are private", "repos", False),  # repo(sitory), plural
        ("which deps are outdated", "deps", False),
        ("which env vars are set", "env", False),
        ("did any k8s pods restart", "k8s", False),  # letters and digits: a kind
        ("any 5xx responses", "5xx", False),
        ("is the sha256 correct", "sha256", False),
        ("anything on stderr", "stderr", False),  # the pack's developer words
        ("is the json valid", "json", False),
        ("show the last 10 commits", "10", False),  # a count
        ("what is on line 42", "42", False),  # a position
        ("did 1234 tests pass", "1234", True),
        ("is v2.3.1 released", "v2.3.1", True),
        ("is Zürich-7 down", "Zürich-7", True),  # joined parts: a name
        ("is lodash a dependency", "lodash", True),
    ],
)
def test_developer_words_counts_and_positions_are_not_specific(query, term, specific):
    from capy.api.intent_specific import is_specific
    from capy.retrieval.query import parse_query
    from capy.rules import load_rules

    search = load_rules().view("search")
    terms = {t.text: t for t in parse_query(query, search).terms}
    assert is_specific(terms[term], query, search) is specific


def test_the_vocabulary_is_not_read_when_every_term_is_held():
    # Telling general words from specific ones matters only for a term the output lacks.
    from capy.api.intent_specific import general_vocabulary, specific_absence
    from capy.rules import load_rules

    general_vocabulary.cache_clear()
    found = specific_absence(["lodash 4.17.20 is outdated"], "is lodash outdated", load_rules())
    assert found.missing == [] and not found.verdict
    assert general_vocabulary.cache_info().currsize == 0


def test_the_shipped_word_list_is_the_vocabulary_worked_out_from_the_tokenizer():
    from capy.api.intent_specific import general_vocabulary, general_words_text

    model = "all-MiniLM-L6-v2-onnx-int8"
    general_vocabulary.cache_clear()
    shipped = general_vocabulary(model)
    lines = general_words_text(model).splitlines()[1:]
    assert shipped.words == tuple(line.split(" ")[0] for line in lines)
    assert "slow" in shipped.stems and "nginx" not in shipped.stems


def test_a_term_in_the_middle_cut_from_the_stored_copy_is_not_called_absent(project_dir):
    # Above the retention pack's max_source_bytes (2 MiB) the stored copy keeps the start and
    # the end; the output as printed still holds what the cut left out (the command does
    # not: it prints the word in two pieces).
    code = (
        'for i in $(seq 1 75000); do echo "record $i ok"; done; '
        'printf "checksum zanzibar%s\\n" quux; '
        'for i in $(seq 75001 150000); do echo "record $i ok"; done'
    )
    reply = execute_code(
        Workspace(project_dir), language="shell", code=code, intent="is zanzibarquux printed"
    )
    assert "never holds" not in reply.text, reply.text
    # What matched nothing is said of what was searched: the part the cap kept.
    assert "Nothing in the 2.0 MiB kept of the output (the size cap cut" in reply.text
