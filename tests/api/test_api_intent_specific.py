"""An intent whose specific terms the output never holds, on real captured outputs (dev half).

"Is nginx installed" on a 93 KB `dpkg-query -l` meets `installed` on many lines, and the reply
showed 2.3 KB of other packages. The term that tells the answer apart (`nginx`: a word general
English does not use, an identifier, a number, a quoted string) is nowhere, so the reply says
so in one line. A question that carries more context than its specific term, or whose
specific term is there, keeps its answer. Everything runs for real: `capy_execute`'s library
call on `cat` of the captured file, a real encrypted store, the reply as the agent reads it.
"""

from __future__ import annotations

import json
import re
import shlex

import pytest

from tests.niah_real_helpers import ask

NEGATIVE_REPLY_BYTES = 300


@pytest.mark.parametrize(
    ("intent_id", "absent"),
    [
        ("dpkg-query-list-06", "nginx"),
        ("dpkg-query-list-07", "docker"),
        ("du-npm-node-modules-04", "webpack"),
        ("npm-ls-npm-05", "lodash"),
        ("openssl-ca-certs-07", "1024-bit"),
        ("spdx-license-list-06", "deprecated"),
    ],
)
def test_a_specific_term_the_output_never_holds_gets_the_short_reply(
    project_dir, intent_id, absent
):
    text, intent = ask(project_dir, intent_id, "negative")
    assert len(text.encode("utf-8")) <= NEGATIVE_REPLY_BYTES, text
    assert "Nothing in the output matched" in text
    assert f"It never holds `{absent}`." in text
    # Beyond the echoed question and the absent names, none of what was asked about is shown.
    shown = re.sub(r" It never holds [^.]*\.", "", text).replace(intent.intent, "")
    assert not any(needle in shown for needle in intent.needles), text


def test_a_short_output_is_withheld_when_its_only_specific_term_is_missing(project_dir):
    # `pip list --format json` of 3.7 KB, under the threshold below which output comes back
    # whole: "django" is not among its packages. Its `version` fields meet the question above
    # the relevance floor, which on main kept the whole 3.8 KB coming back; the missing name
    # is as sure a sign here as on long output, so the reply says so and what it kept back.
    text, _ = ask(project_dir, "pip-list-venv-03", "negative")
    assert len(text.encode("utf-8")) <= NEGATIVE_REPLY_BYTES, text
    assert "It never holds `django`." in text, text
    assert "Not shown" in text, text
    assert '{"name": "annotated-types", "version": "0.8.0"}' not in text


@pytest.mark.parametrize(
    "intent_id",
    [
        # The specific word is absent but the question carries its own context, which finds
        # the answer where the output names the thing otherwise (`tar` listing, no "tarball").
        "tar-list-click-02",
        "git-blame-capy-intent-04",
        "mypy-strict-tabulate-03",
        "unittest-more-itertools-verbose-03",
        "eslint-qs-01",
        # On the same short output as the django question: the package asked about is there.
        "pip-list-venv-01",
    ],
)
def test_a_question_whose_answer_is_there_keeps_it(project_dir, intent_id):
    text, intent = ask(project_dir, intent_id, "positive")
    assert "Nothing in the output matched" not in text
    assert all(needle in text for needle in intent.needles), text


@pytest.mark.parametrize(
    ("query", "term", "specific"),
    [
        ("is nginx installed", "nginx", True),
        ("is nginx installed", "installed", False),
        ("which tests were the slowest", "slowest", False),  # slow, -est
        ("windiest day on record", "windiest", False),  # windy, -iest
        ("does any certificate use a 1024-bit key", "1024-bit", True),
        ("does the archive include a setup.py", "setup.py", True),  # an identifier
        ('where is "grace period" set', "grace period", True),  # quoted
        ("which webhook events fire", "webhook", True),
        ("are any blocks ranked D or worse", "ranked", False),
    ],
)
def test_which_terms_name_one_specific_thing(query, term, specific):
    from capy.api.intent_specific import is_specific
    from capy.retrieval.query import parse_query
    from capy.rules import load_rules

    search = load_rules().view("search")
    terms = {t.text: t for t in parse_query(query, search).terms}
    assert is_specific(terms[term], query, search) is specific


@pytest.mark.parametrize(
    ("intent_id", "kind", "missing"),
    [
        # `httpx` is there, `numpy` is not: the lines about httpx's imports do not answer it.
        ("importtime-httpx-05", "negative", "numpy"),
        ("npm-explain-minimatch-04", "negative", "vite"),
        # The archive is a `tar` listing that never says "sdist"; its answer is still shown.
        ("tar-list-click-03", "positive", "sdist"),
    ],
)
def test_a_reply_with_sections_says_first_which_specific_terms_are_missing(
    project_dir, intent_id, kind, missing
):
    text, intent = ask(project_dir, intent_id, kind)
    header, note = text.split("\n\n")[1:3]
    assert header.startswith("Indexed "), text
    assert note == f"The output never holds `{missing}`.", text
    if kind == "positive":
        assert all(needle in text for needle in intent.needles), text


def test_without_a_vocabulary_only_shapes_mark_a_term_specific():
    # A pack naming no vocabulary (or a model without its tokenizer file) must not take every
    # word for a name: then any question whose words the output lacks would be turned away.
    from capy.api.intent_specific import is_specific
    from capy.retrieval.query import parse_query
    from capy.rules import load_rules
    from capy.rules.views.intents import SpecificTerms

    search = load_rules().view("search")
    intents = search.intents.model_copy(update={"specific": SpecificTerms()})
    search = search.model_copy(update={"intents": intents})
    query = "is nginx 1.25 installed"
    shown = {t.text: is_specific(t, query, search) for t in parse_query(query, search).terms}
    assert shown == {"nginx": False, "1.25": True, "installed": False}


def test_a_name_with_edge_underscores_is_held_only_as_written(project_dir):
    # `black --diff` of six.py (25 KB): `sys.version_info` on many lines, `__version__` on none.
    # The search splits `_` off, so `version` alone counted as holding `__version__` and the
    # reply showed 2.5 KB of version checks; the name is not there, and the reply says so.
    text, intent = ask(project_dir, "black-diff-six-06", "negative")
    assert len(text.encode("utf-8")) <= NEGATIVE_REPLY_BYTES, text
    assert "It never holds `__version__`." in text, text
    # Where the output holds the name as written, its answer is shown.
    text, intent = ask(project_dir, "mypy-strict-tabulate-05", "positive")
    assert "never holds" not in text, text
    assert all(needle in text for needle in intent.needles), text


@pytest.mark.parametrize(
    ("text", "term", "held"),
    [
        ("if sys.version_info[0] == 2:", "__version__", False),
        ('__version__ = "1.17.0"', "__version__", True),
        ("def _afterpoint(string):", "_afterpoint", True),
        ("afterpoint = 3", "_afterpoint", False),
        ("if sys.version_info[0] == 2:", "version", True),
    ],
)
def test_edge_underscores_are_part_of_the_name(text, term, held):
    from capy.api.intent_absent import held_terms
    from capy.retrieval.query import Term

    assert held_terms([text], [Term(term)]) == [held]


def test_markdown_emphasis_in_an_intent_is_the_word_not_a_name(project_dir):
    # vulture on radon (dev half): an agent stressing a word the markdown way ("_unused_") was
    # told "It never holds `_unused_`" and shown nothing; the emphasis is the word `unused`.
    from capy.api.execute import execute_code
    from capy.api.workspace import Workspace
    from tests.niah_real_helpers import dev_intent

    output, _ = dev_intent("vulture-radon-03")
    code = f"cat {shlex.quote(str(output.path.resolve()))}"
    for intent in (
        "which _unused_ methods are in flake8.py",
        "which unused methods are in flake8.py",
    ):
        reply = execute_code(Workspace(project_dir), language="shell", code=code, intent=intent)
        assert "never holds" not in reply.text, reply.text
        assert "unused method 'add_options'" in reply.text, reply.text
        assert "unused method 'parse_options'" in reply.text, reply.text


@pytest.mark.parametrize(
    ("written", "term"),
    [
        ("_private_", "private"),
        ("_private_,", "private"),
        ("__init__", "__init__"),
        ("_helper", "_helper"),
        ("helper_", "helper_"),
        ("_snake_case_", "_snake_case_"),
    ],
)
def test_only_single_underscores_around_one_word_are_emphasis(written, term):
    from capy.retrieval.query import parse_query
    from capy.rules import load_rules

    assert [
        t.text for t in parse_query(f"which {written} names", load_rules().view("search")).terms
    ] == [term, "names"]


@pytest.mark.parametrize(
    ("intent", "package"),
    [
        # People call it pytorch and sklearn; pip prints `torch` and `scikit-learn`.
        ("which version of pytorch is installed", '"torch"'),
        ("which version of sklearn is installed", '"scikit-learn"'),
    ],
)
def test_a_name_whose_start_or_end_the_output_holds_is_no_sign_of_absence(
    project_dir, intent, package
):
    # A short `pip list --format json`: the package asked about is there under the name it is
    # installed by, so "it never holds `pytorch`" would be true to the letter and hide the
    # answer. The output comes back whole; the verdict stays for a name that is truly absent.
    from capy.api.execute import execute_code
    from capy.api.workspace import Workspace

    packages = [("certifi", "2024.2.2"), ("numpy", "1.26.4"), ("requests", "2.31.0")]
    packages += [("scikit-learn", "1.4.1.post1"), ("scipy", "1.12.0"), ("torch", "2.2.1")]
    packages += [(f"pkg-{n}", f"1.{n}.0") for n in range(20)]
    listing = project_dir / "pip-list.json"
    listing.write_text(json.dumps([{"name": n, "version": v} for n, v in packages]))
    code = f"cat {shlex.quote(str(listing))}"
    workspace = Workspace(project_dir)
    text = execute_code(workspace, language="shell", code=code, intent=intent).text
    assert "Nothing in the output matched" not in text, text
    assert package in text, text
    django = "which version of django is installed"
    absent = execute_code(workspace, language="shell", code=code, intent=django).text
    assert "It never holds `django`." in absent, absent
