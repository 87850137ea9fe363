"""A short text found clean is not scanned again (a structured reply repeats its keys, kinds,
labels and titles in every item and every call); a text holding a secret is never remembered and
is found every time; the memo stays bounded."""

from __future__ import annotations

from capy.rules.views import secrets as secrets_view
from capy.security.redaction import redact
from tests.planted_secrets import fresh_secrets


def test_a_short_clean_text_is_scanned_once(secrets, monkeypatch):
    text = "capy_search › tests/server/test_server_stdio.py (lines 10-40)"
    assert secrets.find_secrets(text) == []
    scans = []
    original = type(secrets)._find_directly
    monkeypatch.setattr(
        type(secrets),
        "_find_directly",
        lambda self, value: scans.append(value) or original(self, value),
    )
    assert secrets.find_secrets(text) == []
    assert scans == [], "a text found clean before was scanned again"
    assert redact(text, secrets=secrets).text == text


def test_a_short_text_with_a_secret_is_found_every_time_and_never_kept(secrets):
    for value in fresh_secrets().values():
        text = f"token {value}"[: secrets_view.CLEAN_MEMO_CHARS]
        first = secrets.find_secrets(text)
        if not first:
            continue  # a kind whose shape needs more than the memo's length
        assert secrets.find_secrets(text) == first
        assert text not in secrets._clean_short_texts
        assert value not in redact(text, secrets=secrets).text


def test_the_memo_is_bounded(secrets):
    for number in range(secrets_view.CLEAN_MEMO_ENTRIES + 10):
        secrets.find_secrets(f"label-{number}")
    assert len(secrets._clean_short_texts) <= secrets_view.CLEAN_MEMO_ENTRIES


def test_memoised_findings_match_a_fresh_scan(secrets):
    """Every shipped example, asked twice, gives what the detectors find directly."""
    from capy.masking import merge_overlaps
    from capy.rules.secretscan import SecretFinding

    texts = [
        text
        for detector in secrets.detectors
        if detector.examples
        for text in (*detector.examples.match, *detector.examples.no_match)
        if len(text) <= secrets_view.CLEAN_MEMO_CHARS
    ]
    assert texts
    for text in texts * 2:
        expected = merge_overlaps(secrets._find_directly(text), SecretFinding)
        assert secrets.find_secrets(text) == expected
