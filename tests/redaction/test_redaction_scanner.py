"""`SecretScanner` (needle trie + windows around the cheapest factor hits) finds exactly what
running every detector on the whole text finds: same findings, same order, on real and generated
text."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capy.bench.redaction import typical_log
from capy.rules.secretplan import plan_for
from capy.rules.secretscan import SecretScanner, compile_detector


def one_by_one(detectors, text):
    lowered = text.lower()
    return [finding for detector in detectors for finding in detector.find(text, lowered)]


def assert_same(scanner, text):
    assert scanner.find(text) == one_by_one(scanner.detectors, text)


@pytest.fixture(scope="module")
def scanner(secrets):
    return secrets.scanner


@pytest.fixture(scope="module")
def example_texts(secrets):
    texts = []
    for detector in secrets.detectors:
        if detector.examples:
            texts += [*detector.examples.match, *detector.examples.no_match]
    return texts


def test_pack_examples_alone_and_run_together(scanner, example_texts):
    for text in example_texts:
        assert_same(scanner, text)
    assert_same(scanner, "\n".join(example_texts))
    assert_same(scanner, "".join(example_texts))  # no separators: windows run into each other


def test_gitleaks_cases_and_detect_secrets_files(scanner, shared_testdata):
    cases = shared_testdata("secrets", "gitleaks", "rule_cases.jsonl").read_text("utf-8")
    texts = [json.loads(line)["text"] for line in cases.splitlines()]
    for text in texts:
        assert_same(scanner, text)
    assert_same(scanner, "\n".join(texts))
    for path in sorted(shared_testdata("secrets", "detect-secrets").rglob("*")):
        if path.is_file():
            assert_same(scanner, path.read_text("utf-8", errors="replace"))


def test_typical_log_with_examples_spliced_in(scanner, example_texts):
    lines = typical_log(200_000, seed=3).split("\n")
    for index, example in enumerate(example_texts):
        lines.insert((index * 37) % len(lines), example)
    assert_same(scanner, "\n".join(lines))


# Pieces chosen to make windows meet, overlap and split lines: keywords without values, values
# without keywords, case-folding oddities (ſ and ı match s and i under re.IGNORECASE, İ lowers
# to two characters), CRLF, long runs.
PIECES = [
    "password",
    "PASSWORD = ",
    "token",
    "api_key=",
    "secret_",
    "auth",
    ": ",
    "=",
    '"',
    "'",
    "\n",
    "\r\n",
    " ",
    "\t",
    "paſſword=",
    "İ",
    "ı",
    "K",
    "ghp_",
    "AKIA",
    "xoxb-",
    "eyJ",
    ".",
    "a1B2c3D4e5F6g7H8j9K0",
    "f0e1d2c3b4a59687",
    "A1B2C3D4E5F6G7H2",
    "://user:",
    "@host.example",
    "postgres://",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "curl -u ",
    "Authorization: Bearer ",
    "x" * 50,
    "0" * 30,
    "sk-",
    "é",
    "🔑",
]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(PIECES), max_size=60))
def test_generated_mixtures(scanner, pieces):
    assert_same(scanner, "".join(pieces))


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(PIECES), max_size=30), st.data())
def test_generated_mixtures_with_examples(scanner, example_texts, pieces, data):
    examples = data.draw(st.lists(st.sampled_from(example_texts), max_size=4))
    assert_same(scanner, "".join(pieces + examples))


# Hand-made detectors whose regexes exercise each way a window could go wrong.
TRICKY = {
    "lookahead-past-line": (r"key=(?P<secret>\w{4,})(?=\s*\nend)", ["key"]),
    "dollar-at-line-end": (r"(?m)tok:(?P<secret>[a-z]{3,})$", ["tok"]),
    "word-boundary": (r"\bpw(?P<secret>[0-9]{4,8})\b", ["pw"]),
    "ignorecase-fold": (r"(?i)pass(?P<secret>[0-9]{3,})", ["pass"]),
    "lookbehind-far": (r"(?<=BEGIN-----)val(?P<secret>[0-9]{3})", ["val"]),
    "unbounded-same-line": (r"name[ \t]*=[ \t]*(?P<secret>[a-z0-9]{6,})", ["name"]),
    "bounded-multiline": (r"blob:\n(?P<secret>[A-Z]{4,20}\n[A-Z]{4,20})", ["blob"]),
    "empty-allowed": (r"(?:zz)?", ["zz"]),
    "prefix-before-factor": (r"[a-z_]{0,12}_secret=(?P<secret>\w{5,})", ["secret"]),
    "self-overlapping-factor": (r"aa(?P<secret>[0-9]{3})", ["aa"]),
    # Factors to choose from by their hits (api or key, access or token), and branches whose
    # factors sit at different distances from the start (windows sorted by where they begin).
    "choice-of-factors": (
        r"(?i)(?:api[_.-]?key|access[_.-]?token)[ \t]*[:=][ \t]*(?P<secret>\w{6,})",
        ["api", "access"],
    ),
    "uneven-before": (r"(?:q{0,20}foo|bar)=(?P<secret>[0-9]{3})", ["foo", "bar"]),
    "hoisted-prefix": (r"(?<![A-Z0-9])(?:A3T[A-Z0-9]|AKIA|ASIA)[A-Z2-7]{4}", ["a"]),
    # A match starts within the run of characters it can consume ahead of its factor: runs read
    # case-insensitively (ſ, K and ı fold into [a-z]), case-sensitive classes, and any character.
    "lead-run-ignorecase": (r"(?i)[a-z]{0,10}_tok=(?P<secret>[0-9]{3,})", ["tok"]),
    "lead-run-case-sensitive": (r"[A-Z]{1,8}-key:(?P<secret>[0-9]{3,})", ["key"]),
    "lead-any-character": (r"x.{0,5}tail(?P<secret>[0-9]{3})", ["tail"]),
}


@pytest.fixture(scope="module")
def tricky():
    return SecretScanner(
        compile_detector({"id": f"t.{name}", "pattern": pattern, "keywords": keywords})
        for name, (pattern, keywords) in TRICKY.items()
    )


def test_tricky_detectors_have_plans(tricky):
    planned = {d.rule_id for d, plan in zip(tricky.detectors, tricky.plans, strict=True) if plan}
    assert {"t.unbounded-same-line", "t.bounded-multiline", "t.lead-run-ignorecase"} <= planned


TRICKY_PIECES = [
    "key=",
    "abcd",
    "\n",
    "end",
    " ",
    "tok:",
    "abc",
    "pw",
    "1234",
    "PASS",
    "paſſ",
    "999",
    "BEGIN",
    "val",
    "123",
    "name",
    "=",
    "\t",
    "secret_",
    "my_secret=",
    "hunter22",
    "blob:",
    "ABCD",
    "zz",
    "_",
    "x" * 13,
    "İ",
    "api",
    "_key",
    "key",
    "access",
    "-token",
    ": ",
    "q" * 7,
    "foo",
    "bar",
    "AKIA",
    "A3TX",
    "ASIA",
    "2345",
    "AB",
    "ſ",
    "\u212a",  # KELVIN SIGN, which re matches as k under IGNORECASE
    "ı",
    "_tok=",
    "-key:",
    "x",
    "tail",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(TRICKY_PIECES), max_size=40))
def test_tricky_detectors_match_the_whole_text_scan(tricky, pieces):
    assert_same(tricky, "".join(pieces))


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"ghp_[A-Za-z0-9]{36}", ("ghp_",)),
        (r"(?i:aws|amazon)=\w+", ("aws", "amazon")),  # one factor from each branch
        (r"(?i:aws|amazon)_key=\w+", ("_key=",)),  # else the longest certain literal wins
        (r"(?:A3T[A-Z0-9]|AKIA|ASIA)\w+", ("a3t", "akia", "asia")),  # re hoists the "A" out
        (r"x?[0-9]+", None),  # no literal every match must contain
        (r"foo.*\nbar", None),  # unbounded and crosses lines
    ],
)
def test_plan_factors_without_hits(pattern, expected):
    plan = plan_for(re.compile(pattern))
    chosen = plan.choose(lambda literal: 0)[1] if plan else None
    assert (tuple(factor.literal for factor in chosen) if plan else None) == expected


def test_plan_takes_the_factors_with_fewest_hits():
    plan = plan_for(re.compile(r"(?i)(?:api[_.-]?key|token)=\w{8}"))
    counts = {"api": 90, "key": 5, "token": 7, "=": 400}
    hits, chosen = plan.choose(lambda literal: counts.get(literal, 0))
    assert (hits, [factor.literal for factor in chosen]) == (12, ["key", "token"])
    counts["key"] = 200
    hits, chosen = plan.choose(lambda literal: counts.get(literal, 0))
    assert (hits, [factor.literal for factor in chosen]) == (97, ["api", "token"])


@pytest.mark.parametrize(
    "text", ["aaa123", "xaaaa123", "key=abcd\nend", "tok:abc\n", "BEGIN-----val123"]
)
def test_tricky_regressions(tricky, text):
    assert_same(tricky, text)
    assert tricky.find(text)  # each one does hold a finding


def test_short_texts_detector_by_detector_find_what_the_scanner_finds(
    secrets, example_texts, monkeypatch
):
    """find_secrets runs a short text detector by detector, a long one through the scanner."""
    from capy.rules.views import secrets as view

    texts = [*example_texts, "\n".join(example_texts[:40])]
    assert all(len(text) < view.DIRECT_SCAN_CHARS for text in texts)
    direct = [secrets.find_secrets(text) for text in texts]
    monkeypatch.setattr(view, "DIRECT_SCAN_CHARS", 0)  # every text through the scanner
    assert [secrets.find_secrets(text) for text in texts] == direct
    assert any(direct)
