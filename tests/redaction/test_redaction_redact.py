"""`redact`: masks keep the full rule id, counts are right, nothing secret survives, and
redacting twice changes nothing."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capy.bench.redaction import typical_log
from capy.security.redaction import MASK, mask_for, redact, redact_text

GITHUB = "ghp_a1B2c3D4e5F6g7H8j9K0a1B2c3D4e5F6g7H8"
AWS = "AKIAB2C3D4E5F6G7H2J3"
SAMPLE = f"""\
2026-11-30T04:20:31Z INFO deploy: starting
export GITHUB_TOKEN={GITHUB}
aws_access_key_id = {AWS}
postgres://app:Zq8vR2mKx7Lp3Wn9@db.example.com:5432/app
nothing secret on this line, just a token_ttl = 300 setting
"""


def test_masks_keep_the_full_rule_id(secrets, snapshot):
    result = redact(SAMPLE, secrets=secrets)
    assert GITHUB not in result.text and AWS not in result.text
    assert "Zq8vR2mKx7Lp3Wn9" not in result.text
    assert mask_for("secrets.github-pat") in result.text
    assert result.text == snapshot


def test_counts_name_rules_not_secrets(secrets):
    result = redact(SAMPLE + f"again {GITHUB}\n", secrets=secrets)
    assert result.counts["secrets.github-pat"] == 2
    assert all(rule_id.startswith("secrets.") for rule_id in result.counts)
    assert list(result.counts.values()) == sorted(result.counts.values(), reverse=True)


def test_text_without_secrets_is_returned_as_is(secrets):
    text = "just a log line\nand another\n"
    result = redact(text, secrets=secrets)
    assert result.text is text and not result.changed and result.counts == {}


def test_go_test_names_after_pass_are_not_secrets(secrets):
    # `PASS:` reads as a password assignment; a Go test name is code, and a redacted one could
    # no longer be searched for. A secret-looking value after `pass:` still is one.
    text = (
        "=== RUN   TestRateLimit_BurstThen429\n"
        "--- PASS: TestRateLimit_BurstThen429 (0.01s)\n"
        "--- PASS: TestJanitor_EvictsIdleKeys (0.00s)\n"
        "ok  \trelay/internal/httpmw\t0.412s\n"
    )
    assert redact(text, secrets=secrets).counts == {}
    leaked = redact("db pass: Zq8vR2mKx7Lp3Wn9\n", secrets=secrets)
    assert "Zq8vR2mKx7Lp3Wn9" not in leaked.text


def test_redacting_twice_changes_nothing(secrets):
    once = redact_text(SAMPLE, secrets=secrets)
    assert redact(once, secrets=secrets).findings == ()  # the masks are on the allowlist


@pytest.fixture(scope="module")
def match_examples(secrets):
    return [
        (detector.id, example)
        for detector in secrets.active_detectors
        if detector.examples
        for example in detector.examples.match
    ]


def test_every_match_example_is_redacted_and_stays_redacted(secrets, match_examples):
    for rule_id, example in match_examples:
        result = redact(example, secrets=secrets)
        assert result.changed, rule_id
        # A detector may find its own mask again (<private>[REDACTED:...]</private>); the text
        # must not change however often it is redacted.
        assert redact_text(result.text, secrets=secrets) == result.text, rule_id


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.data())
def test_idempotent_on_mixed_text(secrets, match_examples, data):
    log = typical_log(4000, seed=data.draw(st.integers(0, 50))).split("\n")
    picks = data.draw(st.lists(st.sampled_from(match_examples), max_size=5))
    for index, (_, example) in enumerate(picks):
        log.insert(index * 3, example)
    once = redact_text("\n".join(log), secrets=secrets)
    assert redact_text(once, secrets=secrets) == once


def test_mask_format_is_stable():
    assert MASK.format(rule_id="secrets.jwt") == "[REDACTED:secrets.jwt]"


def test_redact_value_masks_every_string_of_a_structure() -> None:
    import json

    from capy.rules import build_ruleset
    from capy.security.redaction import redact_value

    token = "ghp_a1B2c3D4e5F6g7H8j9K0a1B2c3D4e5F6g7H8"
    data = {"path": f"/tmp/{token}/db", token: [1, (f"x {token}",), None], "n": 3}
    redacted = redact_value(data, secrets=build_ruleset().view("secrets"))
    assert token not in json.dumps(redacted)
    assert redacted["n"] == 3 and redacted["path"] == "/tmp/[REDACTED:secrets.github-pat]/db"
